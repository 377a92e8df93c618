/** Reading and setting action permissions by name (the operator's `gatehouse action …`). */
import { AppError } from '../errors';
import { requireAdministrator } from '../access/caller';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { bit, decode, Decoded, parsePermission } from '../permission/bits';
import type { ActionRow } from '../store/guarded-rows';
import { listActions, updateRow } from '../store/records';
import { unlessManaged } from '../managed/managed-by';

export interface ActionPermissionView {
  action: string;
  on_type: string;
  reference_id: string;
  permission: number;
  decoded: Decoded;
}

export function actionView(row: ActionRow): ActionPermissionView {
  return { action: row.action_name, on_type: row.on_type, reference_id: row.reference_id, permission: row.permission, decoded: decode(row.permission) };
}

export async function listActionViews(s: Services): Promise<ActionPermissionView[]> {
  return (await listActions(s.store.root)).map(actionView);
}

/** `signup` or `user_account/signup`. */
async function findActionByName(s: Services, name: string): Promise<ActionRow> {
  const [type, action] = name.includes('/') ? name.split('/', 2) : [undefined, name];
  const matches = (await listActions(s.store.root)).filter((a) => a.action_name === action && (type === undefined || a.on_type === type));
  if (matches.length === 0) throw new AppError('not_found', `no action named ${name}`);
  if (matches.length > 1) throw new AppError('invalid_input', `${name} names several actions; write it as <type>/${action}`);
  return matches[0];
}

export async function getActionView(s: Services, name: string): Promise<ActionPermissionView> {
  return actionView(await findActionByName(s, name));
}

export type PermissionChange = { guest: 'on' | 'off' } | { value: unknown };

export async function setActionPermissionByName(
  s: Services,
  actor: Actor,
  name: string,
  change: PermissionChange,
): Promise<{ before: ActionPermissionView; after: ActionPermissionView; changed: boolean }> {
  requireAdministrator(actor, 'change action permissions');
  const row = await findActionByName(s, name);
  const next =
    'guest' in change
      ? change.guest === 'on'
        ? row.permission | bit('guest', 'execute')
        : row.permission & ~bit('guest', 'execute')
      : parsePermission(change.value, '{--value}');
  if (next !== row.permission) {
    await unlessManaged(s.store, actor.via, 'action', `${row.on_type}/${row.action_name}`, (tx) => updateRow(tx, 'action', row.id, { permission: next }));
    await s.audit.record('permission_changed', actor, { account: null, record_type: 'action', record: row.reference_id, permission: next });
  }
  return { before: actionView(row), after: actionView({ ...row, permission: next }), changed: next !== row.permission };
}
