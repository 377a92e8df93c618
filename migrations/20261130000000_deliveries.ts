/**
 * Deliveries (contract section 17): every outgoing message, mail or webhook, is a row written in
 * the transaction of the change that causes it, and the running servers deliver it with retries.
 * `webhook` holds the endpoints an operator registered (with their signing secrets).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.string('url', 2000).notNullable();
    t.string('description', 200).notNullable().defaultTo('');
    /** JSON array of event types; empty: every event. */
    t.text('events').notNullable();
    /** The Standard Webhooks signing secret, whsec_<base64>: needed in clear to sign. */
    t.text('secret').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('delivery', (t) => {
    t.increments('id').primary();
    /** msg_<random>: the webhook-id header on every try, and what the operator sees. */
    t.string('message_id', 40).notNullable().unique();
    // mail | webhook
    t.string('kind', 10).notNullable();
    t.integer('webhook_id').nullable().references('id').inTable('webhook').onDelete('CASCADE');
    /** The webhook event type, or the kind of mail (verification, reset, unlock, invitation). */
    t.string('topic', 64).notNullable();
    /** What is sent (JSON); emptied once the message is delivered or has failed for good. */
    t.text('payload').nullable();
    // pending | delivered | failed
    t.string('state', 10).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    /** When it is next due; a claim moves it ahead by the lease, so a crashed sender's claim runs out. */
    t.bigInteger('next_at').notNullable();
    /** The server process holding it now, or null: a restarted SQLite server takes back its dead claims at once. */
    t.string('claimed_by', 40).nullable();
    t.text('last_error').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('done_at').nullable();
    t.index(['state', 'next_at']);
    t.index(['webhook_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('delivery');
  await knex.schema.dropTable('webhook');
}
