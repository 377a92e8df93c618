/**
 * `actions:` who may run each action, by its name (`signup`, or `user_account/signup` where a name
 * is not enough): the whole permission integer, or guest on or off. Actions are built in: none
 * is made or deleted; one the file stops naming keeps its permission and is the shell's again.
 */
import { AppError } from '../../errors';
import { MAX_PERMISSION, bit } from '../../permission/bits';
import { listActions, updateRow } from '../../store/records';
import { managedNames, markManaged, unmarkManaged } from '../../store/config-managed';
import { droppedBy, noResult, takeOverNote, type ConfigKind } from '../kind';

type ConfigAction = { permission?: number; guest?: boolean };

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
        const note = takeOverNote(managed, key, file);
        if (note !== null) result.changes.push({ sign: '~', kind: 'action', name, detail: note });
      }
      await markManaged(tx, 'action', key, file, false);
    }
    // An action is never made or deleted by a file: dropped, it is let go with its permission as it is.
    const gone = droppedBy(managed, (key) => named.has(key), file);
    for (const key of [...gone.remove, ...gone.release]) {
      await unmarkManaged(tx, 'action', key);
      result.changes.push({ sign: '-', kind: 'action', name: key, detail: 'no longer managed (its permission stays)' });
    }
    result.unmanaged.push(...gone.others.map((o) => ({ kind: 'action', name: o.key, file: o.file })));
    return result;
  },

  async export(s) {
    const actions = await listActions(s.store.root);
    const count = (name: string) => actions.filter((a) => a.action_name === name).length;
    return Object.fromEntries(actions.map((a) => [count(a.action_name) > 1 ? `${a.on_type}/${a.action_name}` : a.action_name, { permission: a.permission }]));
  },
};
