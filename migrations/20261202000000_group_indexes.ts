/**
 * Two reads of groups that scanned every group (one home group per account, so as many groups
 * as accounts): a group found by name without regard to case (`lower(name) = ?`: the CLI's group
 * commands, client gates, the LDAP directory's cn= and memberOf= searches), and a group's owner's
 * home group (`user_account_id = ?`: whether a group is managed, asked of every group a gate or a
 * directory search reads). An index serves each.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX usergroup_name_lower ON usergroup (lower(name))');
  await knex.raw('CREATE INDEX usergroup_owner ON usergroup (user_account_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX usergroup_owner');
  await knex.raw('DROP INDEX usergroup_name_lower');
}
