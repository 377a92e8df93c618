/**
 * Sharing a row with groups: the row's group bits then apply to the groups' members (and the
 * list endpoint returns it to them). Sharing needs update on the row and membership of, or
 * refer on, the group. Taking a share back needs update on the row only: whoever controls a row
 * may always narrow who sees it, even after leaving the group it was shared with.
 */
import { AppError, denied } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { can, isGuest, type Principal } from '../permission/check';
import type { Tx } from '../store/connection';
import { shareRecord, sharesOf, unshareRecord, type GroupRow } from '../store/groups';
import { readGuarded, type GuardedRow } from '../store/guarded-rows';
import { loadForWrite, readRow } from './service';
import { isReference } from '../store/reference';
import type { RecordType } from './types';

export type ShareChange = 'add' | 'remove';
export type SharedGroup = Pick<GroupRow, 'reference_id' | 'name'>;

/** The groups a row is shared with; needs read on the row (404 otherwise). */
export async function listShares(s: Services, principal: Principal, type: RecordType, id: string): Promise<SharedGroup[]> {
  const found = await readRow(s.store.root, type, id);
  if (!found || !can(principal, 'read', found.guard)) throw new AppError('not_found', `no such ${type.name} record`);
  return (await sharesOf(s.store.root, type.name, found.row.id)).map(({ reference_id, name }) => ({ reference_id, name }));
}

/** A group named in a share: to share with it, the caller is in it or may refer to it (404 unless it may read it). */
async function groupToShareWith(tx: Tx, principal: Principal, reference: string, change: ShareChange): Promise<GuardedRow<GroupRow>> {
  const group = isReference(reference) ? await readGuarded<GroupRow>(tx, 'usergroup', { reference_id: reference.toLowerCase() }) : undefined;
  if (!group) throw new AppError('not_found', `no such usergroup record: ${reference.slice(0, 40)}`);
  if (change === 'remove') return group; // the row's shares are the row's business
  const member = principal.groupIds.has(group.row.id);
  if (!member && !can(principal, 'read', group.guard)) throw new AppError('not_found', `no such usergroup record: ${reference.slice(0, 40)}`);
  if (!member && !can(principal, 'refer', group.guard)) throw denied(isGuest(principal), `share rows with ${group.row.name}`);
  return group;
}

/** Shares a row with groups or takes shares back; returns the groups whose share changed. */
export async function changeShares(
  s: Services,
  actor: Actor,
  type: RecordType,
  id: string,
  groupReferences: readonly string[],
  change: ShareChange,
): Promise<{ record: string; changed: SharedGroup[] }> {
  const { record, changed } = await s.store.transaction(async (tx) => {
    const row = await loadForWrite(tx, actor.principal, type, id, 'update');
    const changed: SharedGroup[] = [];
    for (const reference of new Set(groupReferences.map((r) => r.toLowerCase()))) {
      const group = await groupToShareWith(tx, actor.principal, reference, change);
      const apply = change === 'add' ? shareRecord : unshareRecord;
      if (await apply(tx, type.name, row.id, group.row.id)) changed.push({ reference_id: group.row.reference_id, name: group.row.name });
    }
    return { record: row.reference_id, changed };
  });
  for (const group of changed) {
    await s.audit.record(change === 'add' ? 'record_shared' : 'record_unshared', actor, {
      account: type.name === 'user_account' ? record : null,
      record_type: type.name,
      record,
      group: group.reference_id,
      group_name: group.name,
    });
  }
  return { record, changed };
}
