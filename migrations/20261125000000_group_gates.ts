/**
 * Client gates name their groups by id, not by name (a name any account can copy). Each stored
 * name becomes the id of the group it meant when the client was added: the oldest group of that
 * name (ignoring case) made no later than the client, preferring one no ordinary account owns.
 * A name that matches no group is dropped, which leaves the gate closed rather than open: a
 * client whose every group is gone admits nobody (a marker id that no group has).
 */
import type { Knex } from 'knex';

const NO_GROUP = '00000000-0000-0000-0000-000000000000';

export async function up(knex: Knex): Promise<void> {
  const clients = await knex('oidc_client').select('client_id', 'allowed_groups', 'created_at');
  for (const client of clients) {
    const names = JSON.parse(client.allowed_groups) as string[];
    if (names.length === 0) continue;
    const ids: string[] = [];
    for (const name of names) {
      const candidates = await knex('usergroup')
        .whereRaw('lower(name) = ?', [name.toLowerCase()])
        .andWhere('created_at', '<=', client.created_at)
        .orderByRaw('CASE WHEN user_account_id IS NULL THEN 0 ELSE 1 END, id')
        .select('reference_id');
      if (candidates.length > 0) ids.push(candidates[0].reference_id);
    }
    await knex('oidc_client')
      .where({ client_id: client.client_id })
      .update({ allowed_groups: JSON.stringify(ids.length > 0 ? ids : [NO_GROUP]) });
  }
}

export async function down(knex: Knex): Promise<void> {
  const clients = await knex('oidc_client').select('client_id', 'allowed_groups');
  for (const client of clients) {
    const ids = JSON.parse(client.allowed_groups) as string[];
    if (ids.length === 0) continue;
    const names = await knex('usergroup').whereIn('reference_id', ids).pluck('name');
    await knex('oidc_client')
      .where({ client_id: client.client_id })
      .update({ allowed_groups: JSON.stringify(names) });
  }
}
