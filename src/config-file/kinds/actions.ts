/**
 * `actions:` who may run each action, by its name (`signup`, or `user_account/signup` where a name
 * is not enough): the whole permission integer, or guest on or off. Actions are built in: none
 * is made or deleted; one the file stops naming keeps its permission and is the shell's again.
 * `config export` writes the actions a file manages and those changed from what a new store gives
 * them, as `{guest: true|false}` while nothing but guest execution differs from that.
 */
import { AppError } from '../../errors';
import { MAX_PERMISSION, OPERATIONS, SIGNUP_CLOSED, SIGNUP_OPEN, bit, encode } from '../../permission/bits';
import { listActions, updateRow } from '../../store/records';
import { managedNames, markManaged } from '../../store/config-managed';
import { dropUnnamed, noResult, noteTakeOver, type ConfigKind } from '../kind';

type ConfigAction = { permission?: number; guest?: boolean };

const GUEST_EXECUTE = bit('guest', 'execute');
/** Every signed-in account runs it (through the group every account joins), no guest. */
const SELF_SERVICE = encode({ guest: ['peek'], owner: OPERATIONS, group: ['peek', 'read', 'execute'] });
const ADMINISTRATORS_ONLY = encode({ owner: OPERATIONS, group: ['peek', 'read'] });

/**
 * What a new store gives each action (signup as once an administrator exists: closed to guests),
 * by `<type>/<name>`. An action not listed is always exported, as its whole permission.
 */
const AS_NEW: Readonly<Record<string, number>> = {
  'user_account/signup': SIGNUP_CLOSED,
  // Sign-in by a mailed code: off until turned on (as guest signup is).
  'user_account/signin_by_mail': SIGNUP_CLOSED,
  ...Object.fromEntries(
    [
      'signin',
      'reset_password_request',
      'reset_password',
      'verify_email',
      'unlock_signin',
      'end_session',
      'passkey_options',
      'passkey_register',
      'passkey_signin',
      'refresh',
    ].map((a) => [`user_account/${a}`, SIGNUP_OPEN]),
  ),
  ...Object.fromEntries(
    [
      'change_password',
      'change_email',
      'signout_everywhere',
      'request_verification',
      'totp_enroll',
      'totp_confirm',
      'totp_disable',
      'list_sessions',
      'revoke_session',
      'signout',
      'signout_others',
      'list_apps',
      'revoke_app',
      'export_data',
      'delete_account',
    ].map((a) => [`user_account/${a}`, SELF_SERVICE]),
  ),
  'world/become_an_administrator': SELF_SERVICE,
  'user_account/invite': ADMINISTRATORS_ONLY,
};

/** An action's permission as the file writes it: guest on or off while that is all that differs from a new store's, else the integer. */
function written(key: string, permission: number): ConfigAction {
  const base = AS_NEW[key];
  if (base !== undefined && (permission & ~GUEST_EXECUTE) === (base & ~GUEST_EXECUTE)) return { guest: (permission & GUEST_EXECUTE) !== 0 };
  return { permission };
}

export const actionsKind: ConfigKind = {
  key: 'actions',
  schema: {
    description: 'Who may run each action, by its name (signup, or user_account/signup): the whole permission integer, or guest on or off.',
    type: 'object',
    maxProperties: 100,
    propertyNames: { pattern: '^[a-z_]{1,64}(/[a-z_]{1,64})?$' },
    additionalProperties: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      properties: {
        permission: { type: 'integer', minimum: 0, maximum: MAX_PERMISSION },
        guest: { type: 'boolean', description: 'Whether a guest (not signed in) may run it.' },
      },
    },
  },

  async reconcile({ tx, parsed, file }) {
    const result = noResult();
    const actions = await listActions(tx);
    const managed = await managedNames(tx, 'action');
    const named = new Set<string>();
    for (const [name, want] of Object.entries((parsed.doc.actions as Record<string, ConfigAction> | undefined) ?? {})) {
      const [type, action] = name.includes('/') ? name.split('/', 2) : [undefined, name];
      const found = actions.filter((a) => a.action_name === action && (type === undefined || a.on_type === type));
      if (found.length !== 1) {
        throw new AppError(
          'invalid_input',
          `${parsed.at(['actions', name], 'key')}: ${found.length === 0 ? `no action named ${name}` : `${name} names several actions; write it as <type>/${action}`}`,
        );
      }
      const row = found[0];
      const key = `${row.on_type}/${row.action_name}`;
      if (named.has(key)) throw new AppError('invalid_input', `${parsed.at(['actions', name], 'key')}: ${name} names ${key} again`);
      named.add(key);
      const next = want.permission ?? (want.guest ? row.permission | bit('guest', 'execute') : row.permission & ~bit('guest', 'execute'));
      if (next !== row.permission) {
        await updateRow(tx, 'action', row.id, { permission: next });
        result.audits.push((s, actor) =>
          s.audit.record('permission_changed', actor, { account: null, record_type: 'action', record: row.reference_id, permission: next }),
        );
        result.changes.push({ sign: '~', kind: 'action', name, detail: `permission ${next} (was ${row.permission})` });
      } else {
        noteTakeOver(result, managed, key, file, 'action', name);
      }
      await markManaged(tx, 'action', key, file, false);
    }
    // An action is never made or deleted by a file: dropped, it is let go with its permission as it is.
    result.changes.push(
      ...(await dropUnnamed(tx, result, file, {
        kind: 'action',
        managed,
        named,
        remove: null,
        kept: 'no longer managed (its permission stays)',
      })),
    );
    return result;
  },

  async export(s) {
    const actions = await listActions(s.store.root);
    const managed = await managedNames(s.store.root, 'action');
    const count = (name: string) => actions.filter((a) => a.action_name === name).length;
    const kept = actions.filter((a) => {
      const key = `${a.on_type}/${a.action_name}`;
      return managed.has(key) || AS_NEW[key] !== a.permission;
    });
    if (kept.length === 0) return undefined;
    return Object.fromEntries(
      kept.map((a) => [count(a.action_name) > 1 ? `${a.on_type}/${a.action_name}` : a.action_name, written(`${a.on_type}/${a.action_name}`, a.permission)]),
    );
  },
};
