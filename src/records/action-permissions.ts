/** Reading and setting action permissions by name (the operator's `gatehouse action …`). */
import { AppError } from '../errors';
import type { Deps } from '../deps';
import { bit, decode, Decoded, parsePermission } from '../permission/bits';
import type { ActionRow } from '../store/rows';
import { listActions } from '../store/records-meta';

export interface ActionPermissionView {
  action: string;
  on_type: string;
  reference_id: string;
  permission: number;
  decoded: Decoded;
}

export function viewOf(row: ActionRow): ActionPermissionView {
  return { action: row.action_name, on_type: row.on_type, reference_id: row.reference_id, permission: row.permission, decoded: decode(row.permission) };
}

/** `signup` or `user_account/signup`. */
export async function findActionByName(deps: Deps, name: string): Promise<ActionRow> {
  const [type, action] = name.includes('/') ? name.split('/', 2) : [undefined, name];
  const matches = (await listActions(deps.store.knex)).filter((a) => a.action_name === action && (type === undefined || a.on_type === type));
  if (matches.length === 0) throw new AppError('not_found', `no action named ${name}`);
  if (matches.length > 1) throw new AppError('invalid_input', `${name} names several actions; write it as <type>/${action}`);
  return matches[0];
}

export type PermissionChange = { guest: 'on' | 'off' } | { value: unknown };

export async function setActionPermissionByName(
  deps: Deps,
  name: string,
  change: PermissionChange,
): Promise<{ before: ActionPermissionView; after: ActionPermissionView; changed: boolean }> {
  const row = await findActionByName(deps, name);
  const next =
    'guest' in change
      ? change.guest === 'on'
        ? row.permission | bit('guest', 'execute')
        : row.permission & ~bit('guest', 'execute')
      : parsePermission(change.value, '--value');
  if (next !== row.permission) {
    await deps.store.knex('action').where({ id: row.id }).update({ permission: next, updated_at: Date.now() });
    await deps.audit.record('permission_changed', { account: null, via: 'cli', record_type: 'action', record: row.reference_id, permission: next });
  }
  return { before: viewOf(row), after: viewOf({ ...row, permission: next }), changed: next !== row.permission };
}
