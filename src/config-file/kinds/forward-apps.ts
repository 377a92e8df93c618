/**
 * `forward_apps:` apps behind a reverse proxy (forward authentication), each named by its host
 * and path prefixes: who may open it (managed groups, by name), paths open to everyone, and
 * whether it needs a second factor. An app of the same host and paths made by hand is taken
 * over; one an earlier apply made and the file no longer names is removed.
 */
import { AppError, isAppError, reworded } from '../../errors';
import { appKey, appRowOf } from '../../apps/app-rows';
import { deleteApp, insertApp, listApps, updateApp, type AppRow } from '../../store/apps';
import { findGroupsByReference } from '../../store/groups';
import { managedNames, markManaged } from '../../store/config-managed';
import { sameSet, allowedGroupsSchema } from './common';
import { dropUnnamed, listed, noResult, noteTakeOver, type ConfigKind } from '../kind';

interface ConfigApp {
  host: string;
  paths?: string[];
  allowed_groups?: string[];
  bypass_paths?: string[];
  two_factor?: boolean;
}

const prefixes = { type: 'array', maxItems: 50, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 500 } } as const;
const list = (json: string) => JSON.parse(json) as string[];

export const forwardAppsKind: ConfigKind = {
  key: 'forward_apps',
  schema: {
    description: 'Apps behind a reverse proxy that asks Gatehouse (forward authentication), each named by its host and paths.',
    type: 'array',
    maxItems: 1000,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['host'],
      properties: {
        host: { type: 'string', minLength: 1, maxLength: 253, description: 'The host name (app.example.com: no scheme, no port).' },
        paths: { ...prefixes, description: 'Path prefixes this app covers (none: the whole host).' },
        allowed_groups: allowedGroupsSchema('Managed groups whose members may open it (none: every signed-in account).'),
        bypass_paths: { ...prefixes, description: 'Path prefixes open to everyone, signed in or not.' },
        two_factor: { type: 'boolean', description: 'Sessions need a second factor.' },
      },
    },
  },

  async reconcile({ tx, parsed, file }) {
    const result = noResult();
    const managed = await managedNames(tx, 'forward_app');
    const stored = new Map((await listApps(tx)).map((row) => [appKey({ host: row.host, paths: list(row.paths) }), row] as [string, AppRow]));
    const named = new Set<string>();
    const covered = new Set<string>();
    const madeHere = new Set<string>();
    const apps = (parsed.doc.forward_apps as ConfigApp[] | undefined) ?? [];
    for (const [index, app] of apps.entries()) {
      const wanted = await appRowOf(tx, {
        host: app.host,
        paths: app.paths,
        allowedGroups: app.allowed_groups,
        bypassPaths: app.bypass_paths,
        twoFactor: app.two_factor,
      }).catch((err: unknown) => {
        const message = `${parsed.at(['forward_apps', index])}: ${(err as Error).message}`;
        throw isAppError(err) ? reworded(err, message) : new AppError('invalid_input', message);
      });
      const key = appKey(wanted);
      if (named.has(key)) throw new AppError('invalid_input', `${parsed.at(['forward_apps', index, 'host'])}: the app ${key} is named twice`);
      named.add(key);
      // One host's paths belong to one app each: two apps covering one path would leave which gate answers to their order.
      // "/" covers the whole host, as no path does.
      for (const p of wanted.paths.length === 0 || wanted.paths.includes('/') ? ['(the whole host)'] : wanted.paths) {
        const at = `${wanted.host} ${p}`;
        if (covered.has(at))
          throw new AppError(
            'invalid_input',
            `${parsed.at(['forward_apps', index, 'paths'])}: ${p === '(the whole host)' ? 'the whole' : p} of ${wanted.host} is covered by two apps`,
          );
        covered.add(at);
      }
      const row = stored.get(key);
      if (!row) {
        const made = await insertApp(tx, wanted);
        stored.set(key, made);
        madeHere.add(key);
        result.audits.push((s, actor) => s.audit.record('app_added', actor, { account: null, app: made.reference_id, host: made.host }));
        result.changes.push({ sign: '+', kind: 'forward_app', name: key, detail: null });
      } else {
        const differs: string[] = [];
        if (!sameSet(list(row.allowed_groups), wanted.allowedGroups)) differs.push(`allowed groups ${listed(app.allowed_groups ?? [])}`);
        if (!sameSet(list(row.bypass_paths), wanted.bypassPaths)) differs.push(`bypass paths ${listed(wanted.bypassPaths)}`);
        if (row.two_factor !== wanted.twoFactor) differs.push(`two factor ${wanted.twoFactor ? 'on' : 'off'}`);
        if (differs.length > 0) {
          await updateApp(tx, row.id, wanted);
          result.changes.push({ sign: '~', kind: 'forward_app', name: key, detail: differs.join('; ') });
        }
        noteTakeOver(result, managed, key, file, 'forward_app', key);
      }
      await markManaged(tx, 'forward_app', key, file, madeHere.has(key));
    }
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'forward_app',
      managed,
      named,
      remove: {
        stored,
        drop: async (row) => {
          await deleteApp(tx, row.id);
          result.audits.push((s, actor) => s.audit.record('app_removed', actor, { account: null, app: row.reference_id, host: row.host }));
        },
      },
    });
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const rows = await listApps(s.store.root);
    if (rows.length === 0) return undefined;
    const out: ConfigApp[] = [];
    for (const row of rows) {
      const ids = list(row.allowed_groups);
      const groups = await findGroupsByReference(s.store.root, ids);
      const app: ConfigApp = { host: row.host };
      if (list(row.paths).length > 0) app.paths = list(row.paths);
      // A gate whose group was deleted lets nobody through: written as a name no group has, so
      // applying the file fails (and says so) rather than opening the app to everyone.
      if (ids.length > 0) app.allowed_groups = ids.map((id) => groups.find((g) => g.reference_id === id)?.name ?? `(deleted group ${id})`);
      if (list(row.bypass_paths).length > 0) app.bypass_paths = list(row.bypass_paths);
      if (row.two_factor) app.two_factor = true;
      out.push(app);
    }
    return out;
  },
};
