/**
 * The forward-authentication domain (contract section 11): apps behind reverse proxies, who may
 * open them, and the decision a proxy asks for on every request.
 */
import { acrOf } from '../accounts/assurance';
import { stillAnswers } from '../accounts/app-answer';
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { authenticateRiding } from '../access/authenticate';
import { findGroupsByReference } from '../store/groups';
import { AppRow, deleteApp, findApp, findAppsByHost, forwardRide, insertApp, listApps } from '../store/apps';
import { unlessManaged } from '../managed/managed-by';
import { ambiguousUnder, appFor, normalHost, under } from './rules';
import { appKey, appRowOf, type NewAppInput } from './app-rows';
import { isReference } from '../store/reference';

export interface AppView {
  reference_id: string;
  host: string;
  paths: string[];
  allowed_groups: Array<{ reference_id: string; name: string | null }>;
  two_factor: boolean;
  bypass_paths: string[];
  created_at: string;
}

export type { NewAppInput } from './app-rows';

/** The request a proxy asks about. */
export interface ForwardRequest {
  method: string;
  /** The original URL, absolute. */
  url: URL;
  /** Its path as rules match it: normalPath's reading of the path as sent. */
  path: string;
}

export type ForwardDecision =
  | { outcome: 'allowed'; user: { id: string; email: string; name: string; groups: string[] } | null }
  | { outcome: 'unauthenticated' }
  /** A path only a lenient app would read as under a rule: refused, not guessed. */
  | { outcome: 'bad_path'; problem: string }
  | { outcome: 'denied'; reason: 'no_app' | 'not_member' | 'two_factor' };

export interface AppOperations {
  add(actor: Actor, input: NewAppInput): Promise<AppView>;
  list(actor: Actor): Promise<AppView[]>;
  /** By reference_id, or by host when the host has exactly one app. */
  show(actor: Actor, app: string): Promise<AppView>;
  remove(actor: Actor, app: string): Promise<AppView>;
  /** May this request pass? One store round trip, no write, no hashing. */
  forward(caller: Caller, request: ForwardRequest): Promise<ForwardDecision>;
}

const parseList = (s: string): string[] => JSON.parse(s) as string[];

async function view(s: Services, row: AppRow): Promise<AppView> {
  const ids = parseList(row.allowed_groups);
  const groups = await findGroupsByReference(s.store.root, ids);
  return {
    reference_id: row.reference_id,
    host: row.host,
    paths: parseList(row.paths),
    allowed_groups: ids.map((id) => ({ reference_id: id, name: groups.find((g) => g.reference_id === id)?.name ?? null })),
    two_factor: row.two_factor,
    bypass_paths: parseList(row.bypass_paths),
    created_at: new Date(row.created_at).toISOString(),
  };
}

async function resolveApp(s: Services, app: string): Promise<AppRow> {
  if (isReference(app)) {
    const row = await findApp(s.store.root, app);
    if (row) return row;
  }
  const host = normalHost(app);
  const rows = host === null ? [] : await findAppsByHost(s.store.root, host);
  if (rows.length === 1) return rows[0];
  if (rows.length > 1) throw new AppError('invalid_input', `${host} has ${rows.length} apps (by path); name one by its id (gatehouse app list)`);
  throw new AppError('not_found', `no app ${app}`);
}

export function appOperations(s: Services): AppOperations {
  return {
    async add(actor, input) {
      requireAdministrator(actor, 'add apps');
      const wanted = await appRowOf(s.store.root, input);
      const { host, paths } = wanted;
      const existing = await findAppsByHost(s.store.root, host);
      const covers = (a: AppRow) => JSON.stringify([...parseList(a.paths)].sort()) === JSON.stringify([...paths].sort());
      if (existing.some(covers)) throw new AppError('conflict', `an app already covers ${host}${paths.length ? ` ${paths.join(' ')}` : ''}; remove it first`);
      // A host whose apps a configuration file sets is the file's: an app of another path here
      // would change who passes there (a path app answers before the host's own).
      const neighbours = existing.map((other) => appKey({ host, paths: parseList(other.paths) }));
      const row = await unlessManaged(s.store, actor.via, 'forward_app', neighbours, (tx) => insertApp(tx, wanted));
      await s.audit.record('app_added', actor, { account: null, app: row.reference_id, host });
      return view(s, row);
    },
    async list(actor) {
      requireAdministrator(actor, 'list apps');
      return Promise.all((await listApps(s.store.root)).map((r) => view(s, r)));
    },
    async show(actor, app) {
      requireAdministrator(actor, 'read apps');
      return view(s, await resolveApp(s, app));
    },
    async remove(actor, app) {
      requireAdministrator(actor, 'remove apps');
      const row = await resolveApp(s, app);
      const shown = await view(s, row);
      await unlessManaged(s.store, actor.via, 'forward_app', appKey({ host: row.host, paths: parseList(row.paths) }), (tx) => deleteApp(tx, row.id));
      await s.audit.record('app_removed', actor, { account: null, app: row.reference_id, host: row.host });
      return shown;
    },
    async forward(caller, request) {
      const host = normalHost(request.url.hostname) ?? '';
      const path = request.path;
      let result;
      try {
        result = await authenticateRiding(s, caller.token, (subject) => forwardRide(s.store.root, host, subject), { apiKeys: false });
      } catch (err) {
        // An expired or revoked token is "not signed in": the browser goes to sign in again.
        if (err instanceof AppError && err.code === 'invalid_token') return { outcome: 'unauthenticated' };
        throw err;
      }
      const { principal, value: facts } = result;
      // A path only a lenient app reads as under a rule (`/Admin`, `/admin./`) is refused, not guessed.
      const ambiguous = ambiguousUnder(
        path,
        facts.apps.flatMap((a) => [...a.paths, ...a.bypassPaths]),
      );
      if (ambiguous !== null) return { outcome: 'bad_path', problem: `the path differs from the rule's ${ambiguous} only in case or trailing dots` };
      const app = appFor(facts.apps, path);
      if (!app) return { outcome: 'denied', reason: 'no_app' };
      if (app.bypassPaths.some((p) => under(path, p))) return { outcome: 'allowed', user: null };
      // A recovery link's session is for adding a way in on /account, never a sign-in to an app.
      if (principal.referenceId === null || facts.account === null || facts.sessionRecovery) return { outcome: 'unauthenticated' };
      if (app.allowedGroups.length > 0 && !facts.groups.some((g) => app.allowedGroups.includes(g.referenceId)))
        return { outcome: 'denied', reason: 'not_member' };
      // The rule of answering an app, as every protocol applies it (accounts/app-answer.ts): a
      // proxied request is a use, with nobody to ask, so a session that falls short is refused.
      if (!(await stillAnswers(acrOf({ two_factor: facts.sessionTwoFactor }), { twoFactor: app.twoFactor })))
        return { outcome: 'denied', reason: 'two_factor' };
      return {
        outcome: 'allowed',
        user: { id: principal.referenceId, email: facts.account.email, name: facts.account.name, groups: facts.groups.map((g) => g.name) },
      };
    },
  };
}
