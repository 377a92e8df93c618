/**
 * The core: built once from the configuration and handed to both front ends (the HTTP server
 * and the admin commands). It is a set of operations grouped by domain, one function per use
 * case; the services behind them (store, hashing, tokens, limits, mail, audit) stay inside.
 * Front ends translate requests and arguments into these calls, and their answers back.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from './config';
import { Clock, systemClock } from './clock';
import { AppError, denied } from './errors';
import { createLogger, Logger } from './log';
import { SHELL, type Actor } from './actor';
import type { Services } from './services';
import { dataDirWarning, openStore, schemaStatus, SchemaStatus, Store } from './store/connection';
export { assertStoreExists, prepareDataDir } from './store/connection';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './records/query';
/** The record API's page sizes, for documents that state them (/openapi.json). */
export const PAGE_SIZE = { default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE } as const;
import { findAccountById, groupsOf } from './store/accounts';
import { totpUri } from './auth/totp';
import { prune as pruneCounters, pruneKnownSignins } from './store/counters';
import { pruneTokens } from './store/account-tokens';
import { copyStore, CopyReport } from './store/copy';
import { PasswordHasher } from './auth/passwords';
import { TokenService } from './auth/tokens';
import { KeyRing, keyView, KeyView, PublicJwk, rotateKeys, SIGNING_ALGS, SigningAlg } from './auth/keys';
import { listSigningKeys, pruneLegacySecret, pruneSigningKeys, retireSigningKey } from './store/keys';
import { KNOWN_SIGNIN_MS, Limiter } from './auth/limits';
import { authenticate } from './auth/authenticate';
import { createMailer } from './mail/mailer';
import { Tasks } from './tasks';
import { Audit } from './audit';
import type { AuditFilter, AuditRow } from './store/audit';
import { isGuest, type Principal } from './permission/check';
import { bootstrapAdmin, BootstrapOutcome } from './accounts/bootstrap';
import { createAccount, newAccountFrom } from './accounts/create';
import { demote, findAccountByEmail, promote, reloadAccount, resetTotp, revokeSessions, setDisabled, setPassword, unlockAccount } from './accounts/lifecycle';
import { AccountView, listAccountViews, viewAccount } from './accounts/views';
import { signupStatus, SignupCheck } from './accounts/signup-status';
import { listSessions, revokeSession, SessionView, SESSION_IDLE_MS } from './accounts/sessions';
import { pruneSessions } from './store/sessions';
import { latestGrant, oidcCookieKey, prunePayloads } from './store/oidc';
import { addClient, ClientView, listClientViews, NewClient, removeClient, rotateClientSecret, showClient } from './oidc/clients';
import { adapterFor, claimsOf, clientPolicy, OidcClaims, pageSessionOf, ProviderAdapter } from './oidc/support';
import { actionCatalog, findAction, runAction } from './actions/registry';
import { ColumnType, SCHEMA } from './store/schema';
import type { ActionItem } from './actions/types';
import { getActionView, listActionViews, PermissionChange, setActionPermissionByName, ActionPermissionView } from './records/action-permissions';
import { createRecord, deleteRecord, getRecordOf, listRecords, RecordPage, RecordView, updateRecord, viewOf } from './records/service';
import { RECORD_TYPES, recordType } from './records/types';
import type { Query } from './records/query';
import { accountStats, dbStats, storeStats } from './stats';
import { filterIndexed, poolStats, storeWritable } from './store/stats';
import { changeMembers, listMembers, MemberChange } from './groups/members';
import { changeShares, listShares, SharedGroup } from './groups/sharing';
import { createGroup, GroupDetail, GroupView, groupPermission, parseGroupName, resolveGroup, showGroup, listGroupViews } from './groups/manage';

export type { Actor } from './actor';
export type { AccountView } from './accounts/views';
export type { ActionItem } from './actions/types';
export type { ActionPermissionView, PermissionChange } from './records/action-permissions';
export type { RecordPage, RecordView } from './records/service';
export type { Query } from './records/query';
export type { AuditRow, AuditFilter } from './store/audit';
export type { BootstrapOutcome } from './accounts/bootstrap';
export type { GroupView, GroupDetail } from './groups/manage';
export type { SharedGroup } from './groups/sharing';
export type { MemberChange } from './groups/members';
export type { KeyView, PublicJwk } from './auth/keys';
export type { SessionView } from './accounts/sessions';
export type { ClientView, NewClient } from './oidc/clients';
export type { OidcClaims, ProviderAdapter } from './oidc/support';
export type { SchemaStatus } from './store/connection';
export { describe as describePermission } from './permission/bits';

/** An HTTP request as the core sees it: its Authorization header and the client's address. */
export interface Caller {
  readonly authorization: string | null;
  readonly client: string;
  readonly userAgent: string | null;
  /** The pages' long-lived device cookie, when the request came from a browser that has one. */
  readonly device?: string | null;
}

/** What the HTTP API serves, described from the definitions the handlers use (/openapi.json). */
export interface ApiCatalog {
  actions: ReadonlyArray<{ onType: string; name: string; input: Readonly<Record<string, 'required' | 'optional'>>; ignoresToken: boolean }>;
  records: ReadonlyArray<{
    name: string;
    /** Serialized attributes and their types. */
    attributes: Readonly<Record<string, ColumnType>>;
    filterColumns: readonly string[];
    sortColumns: readonly string[];
    /** Attributes a PATCH may change, and who may. */
    writable: Readonly<Record<string, 'anyone' | 'administrators'>>;
    /** Attributes a POST takes; null: rows of this type are built in. */
    createAttributes: readonly string[] | null;
    deletable: boolean;
  }>;
}

export interface MetricsSnapshot {
  signinsOk: number;
  signinsFailed: number;
  signups: number;
  lockouts: number;
  hashesQueued: number;
  hashesRunning: number;
  /** The store's connection pool (null where the driver keeps none). */
  pool: { used: number; free: number; pending: number } | null;
}

/** Operator input for a new account (passwords never come from arguments). */
export interface AccountInput {
  email: string;
  name?: string;
  password: string;
}

export interface Core {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The operator at the shell: the actor of every admin command. */
  readonly shell: Actor;
  readonly auth: {
    /** The actor behind a request: a guest without credentials, 401 for a bad token. */
    actor(caller: Caller): Promise<Actor>;
  };
  readonly accounts: {
    bootstrapAdmin(actor: Actor, input: AccountInput): Promise<{ outcome: BootstrapOutcome; referenceId: string }>;
    create(actor: Actor, input: AccountInput): Promise<AccountView>;
    list(actor: Actor): Promise<AccountView[]>;
    show(actor: Actor, email: string): Promise<AccountView>;
    setDisabled(actor: Actor, email: string, disabled: boolean): Promise<{ account: AccountView; changed: boolean }>;
    setPassword(actor: Actor, email: string, password: string): Promise<AccountView>;
    revokeSessions(actor: Actor, email: string): Promise<AccountView>;
    unlock(actor: Actor, email: string): Promise<{ account: AccountView; unlocked: boolean }>;
    resetTotp(actor: Actor, email: string): Promise<{ account: AccountView; changed: boolean }>;
    promote(actor: Actor, email: string): Promise<{ account: AccountView; changed: boolean }>;
    demote(actor: Actor, email: string): Promise<{ account: AccountView; changed: boolean }>;
    /** The caller's TOTP enrolment in progress (enrolled, not yet confirmed), or null. */
    pendingTotp(caller: Caller): Promise<{ secret: string; uri: string } | null>;
    /** The account's open sessions, newest first. */
    sessions(actor: Actor, email: string): Promise<{ account: AccountView; sessions: SessionView[] }>;
    /** Ends one session: its tokens are refused on the next request, on every instance. */
    revokeSession(actor: Actor, email: string, sessionId: string): Promise<AccountView>;
  };
  readonly actions: {
    /** 404 for an unknown action (checked before the request body is read). */
    assertExists(type: string, name: string): void;
    run(caller: Caller, type: string, name: string, attributes: Record<string, unknown>): Promise<ActionItem[]>;
    list(actor: Actor): Promise<ActionPermissionView[]>;
    get(actor: Actor, name: string): Promise<ActionPermissionView>;
    setPermission(
      actor: Actor,
      name: string,
      change: PermissionChange,
    ): Promise<{ before: ActionPermissionView; after: ActionPermissionView; changed: boolean }>;
  };
  readonly records: {
    list(caller: Caller, type: string, query: Query): Promise<RecordPage>;
    get(caller: Caller, type: string, id: string): Promise<RecordView>;
    create(actor: Actor, type: string, attributes: Record<string, unknown>): Promise<RecordView>;
    update(actor: Actor, type: string, id: string, attributes: Record<string, unknown>): Promise<RecordView>;
    remove(actor: Actor, type: string, id: string): Promise<void>;
    /** 404 for an unknown record type. */
    assertType(type: string): void;
    /** The caller's own account with its groups and whether it administers (401 for guests). */
    me(
      caller: Caller,
    ): Promise<{ view: RecordView; meta: { groups: Array<{ id: string; name: string }>; administrator: boolean; session: SessionView | null } }>;
  };
  readonly groups: {
    list(actor: Actor): Promise<GroupView[]>;
    /** A group by name or reference_id, with its members. */
    show(actor: Actor, group: string): Promise<GroupDetail>;
    /** `owner`: an account's email (its owner bits apply); `permission` as the record API takes it. */
    create(actor: Actor, input: { name: string; owner?: string; permission?: string }): Promise<GroupDetail>;
    remove(actor: Actor, group: string): Promise<GroupView>;
    /** The shell's add/remove: by group name (or id) and email. */
    changeMember(actor: Actor, group: string, email: string, change: MemberChange): Promise<{ group: GroupView; account: AccountView; changed: boolean }>;
    /** The members' reference_ids (read on the group). */
    members(caller: Caller, groupId: string): Promise<string[]>;
    /** The record API's add/remove, by reference_ids (update on the group, refer on memberships). */
    changeMembers(actor: Actor, groupId: string, accountIds: readonly string[], change: MemberChange): Promise<void>;
    /** The groups a row is shared with (read on the row). */
    shares(caller: Caller, type: string, id: string): Promise<SharedGroup[]>;
    /** Shares a row with groups or takes shares back (update on the row; membership of or refer on the group to share). */
    changeShares(actor: Actor, type: string, id: string, groupIds: readonly string[], change: MemberChange): Promise<void>;
  };
  readonly keys: {
    list(actor: Actor): Promise<KeyView[]>;
    /** A new signing key (RS256 unless `alg` says ES256); the old one verifies until its tokens expired. */
    rotate(actor: Actor, alg?: string): Promise<{ kid: string; alg: string; retired: string[] }>;
    /** Withdraws a key that no longer signs: its tokens are refused at once, on every instance. */
    retire(actor: Actor, kid: string): Promise<KeyView>;
    /** The public keys: GET /.well-known/jwks.json. */
    jwks(): Promise<{ keys: PublicJwk[] }>;
  };
  /** Relying parties of the OpenID Connect provider, managed from the shell. */
  readonly clients: {
    add(actor: Actor, input: NewClient): Promise<ClientView & { client_secret?: string }>;
    list(actor: Actor): Promise<ClientView[]>;
    show(actor: Actor, clientId: string): Promise<ClientView>;
    remove(actor: Actor, clientId: string): Promise<ClientView>;
    rotateSecret(actor: Actor, clientId: string): Promise<{ client_id: string; client_secret: string }>;
  };
  /** What the OpenID Connect provider (http/oidc.ts) is built on. */
  readonly oidc: {
    adapter(model: string): ProviderAdapter;
    claims(sub: string): Promise<OidcClaims | undefined>;
    clientPolicy(clientId: string, sub: string | null): Promise<{ firstParty: boolean; allowed: boolean; name: string }>;
    /** The account's live grant to a client, from any earlier session. */
    latestGrant(sub: string, clientId: string): Promise<string | undefined>;
    /** The account behind a page session and when it signed in (seconds), or null. */
    pageSession(caller: Caller): Promise<{ sub: string; authTime: number } | null>;
    /** The signing keys as private JWKs (never served), and a version that changes with them. */
    signingKeys(): Promise<{ version: string; keys: ReadonlyArray<Record<string, unknown>> }>;
    cookieKey(): Promise<string>;
  };
  readonly audit: {
    query(actor: Actor, filter: AuditFilter & { accountEmail?: string }): Promise<AuditRow[]>;
  };
  /** What the store holds, whether guest signup is open and what closes it, its schema and size. */
  stats(actor: Actor): Promise<Awaited<ReturnType<typeof storeStats>>>;
  /** The core's part of GET /statistics (administrators only unless --public-statistics). */
  statistics(caller: Caller): Promise<Record<string, unknown>>;
  /** The actions and record types the HTTP API serves, with their attributes. */
  catalog(): ApiCatalog;
  /** True when the store answers a query within `timeoutMs` (GET /health/ready). */
  ready(timeoutMs: number): Promise<boolean>;
  /**
   * Figures for GET /metrics: to administrators, to the bearer of --metrics-token-file's token,
   * or to everyone with --public-metrics.
   */
  metrics(caller: Caller): Promise<MetricsSnapshot>;
  signupStatus(): Promise<{ open: boolean; closedBy: SignupCheck | null }>;
  /** Whether filter= on accounts and groups is served by trigram indexes (not a scan). */
  filterIndexed(): Promise<boolean>;
  schema(): Promise<SchemaStatus>;
  /** Where the store is, for logs (no credentials). */
  readonly storeLocation: string;
  readonly dialect: Store['dialect'];
  /** Drops old counters and long-expired tokens (a running server calls it periodically). */
  prune(): Promise<void>;
  /**
   * The server is bound at `url`. Without --public-url, links, the token issuer and the OpenID
   * issuer name this address from now on (so `--port 0` never yields `:0`).
   */
  listening(url: string): void;
  /** Waits for background work (mail sent after an answer). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface CoreOptions {
  logger?: Logger;
  clock?: Clock;
}

const KEEP_COUNTERS_MS = 24 * 60 * 60 * 1000;
/** Withdrawn keys stay listed (as retired) this long. */
const KEEP_RETIRED_KEYS_MS = 30 * 24 * 60 * 60 * 1000;

/** `Authorization: Bearer <expected>`, compared in constant time (digests of equal length). */
function bearerIs(authorization: string | null, expected: string): boolean {
  const given = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
  if (given === undefined) return false;
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function requireAdministrator(actor: Actor, what: string): void {
  if (!actor.principal.isAdmin) throw denied(isGuest(actor.principal), what);
}

export async function openCore(config: Config, options: CoreOptions = {}): Promise<Core> {
  const logger = options.logger ?? createLogger();
  const clock = options.clock ?? systemClock;
  const store = await openStore(config, clock);
  const dirWarning = dataDirWarning(config);
  if (dirWarning) logger.warn('data_dir_open', { message: dirWarning });
  let s: Services;
  try {
    const keys = new KeyRing(store.root, clock, config.tokenTtlSeconds);
    await keys.open();
    const tokens = new TokenService(keys, () => s.config.publicUrl, config.tokenTtlSeconds, clock);
    const passwords = new PasswordHasher(config.bcryptCost, config.hashConcurrency);
    s = {
      config,
      clock,
      logger,
      store,
      passwords,
      keys,
      tokens,
      limiter: new Limiter(store.root, config, clock),
      mailer: createMailer(config),
      tasks: new Tasks(logger),
      audit: new Audit(store, logger),
      counters: { signinsOk: 0, signinsFailed: 0, signups: 0, lockouts: 0 },
    };
  } catch (err) {
    await store.close();
    throw err;
  }

  const actorOf = async (caller: Caller): Promise<Actor> => {
    const { principal, session } = await authenticate(s, caller.authorization);
    return { principal, via: 'http', client: caller.client, userAgent: caller.userAgent, session, device: caller.device ?? null };
  };
  const principalOf = async (caller: Caller): Promise<Principal> => (await authenticate(s, caller.authorization)).principal;
  const view = async (email: string) => viewAccount(s, await findAccountByEmail(s, email));
  /** A state change's answer for the shell: the account as it is now, and whether anything changed. */
  const changed = async (email: string, change: Promise<{ changed: boolean }>) => ({ changed: (await change).changed, account: await view(email) });

  return {
    get config() {
      return s.config;
    },
    listening(url) {
      if (!s.config.publicUrlSet) s.config = Object.freeze({ ...s.config, publicUrl: url });
    },
    clock,
    logger,
    shell: SHELL,
    storeLocation: store.location,
    dialect: store.dialect,
    auth: { actor: actorOf },
    accounts: {
      bootstrapAdmin: (actor, input) => bootstrapAdmin(s, actor, input),
      async create(actor, input) {
        requireAdministrator(actor, 'create accounts from here');
        const created = await createAccount(s, actor, newAccountFrom(input, config.passwordMinLength));
        return viewAccount(s, await findAccountByEmail(s, created.email));
      },
      async list(actor) {
        requireAdministrator(actor, 'list accounts');
        return listAccountViews(s);
      },
      async show(actor, email) {
        requireAdministrator(actor, 'read accounts');
        return view(email);
      },
      setDisabled: (actor, email, disabled) => changed(email, setDisabled(s, actor, email, disabled)),
      async setPassword(actor, email, password) {
        await setPassword(s, actor, email, password);
        return view(email);
      },
      async revokeSessions(actor, email) {
        requireAdministrator(actor, 'end sessions of other accounts');
        await revokeSessions(s, actor, await findAccountByEmail(s, email));
        return view(email);
      },
      async unlock(actor, email) {
        const r = await unlockAccount(s, actor, email);
        return { account: await view(email), unlocked: r.unlocked };
      },
      resetTotp: (actor, email) => changed(email, resetTotp(s, actor, email)),
      promote: (actor, email) => changed(email, promote(s, actor, email)),
      demote: (actor, email) => changed(email, demote(s, actor, email)),
      async pendingTotp(caller) {
        const { principal } = await actorOf(caller);
        const account = principal.accountId === null ? undefined : await findAccountById(store.root, principal.accountId);
        if (!account || account.totp_enabled || !account.totp_secret) return null;
        return { secret: account.totp_secret, uri: totpUri(account.totp_secret, account.email) };
      },
      async sessions(actor, email) {
        requireAdministrator(actor, 'list the sessions of other accounts');
        const account = await findAccountByEmail(s, email);
        return { account: await viewAccount(s, account), sessions: await listSessions(s, account.id, actor.session) };
      },
      async revokeSession(actor, email, sessionId) {
        requireAdministrator(actor, 'end sessions of other accounts');
        const account = await findAccountByEmail(s, email);
        await revokeSession(s, actor, account.id, sessionId);
        return viewAccount(s, account);
      },
    },
    actions: {
      assertExists: (type, name) => void findAction(type, name),
      run: (caller, type, name, attributes) => runAction(s, findAction(type, name), () => actorOf(caller), caller, attributes),
      async list(actor) {
        requireAdministrator(actor, 'list actions');
        return listActionViews(s);
      },
      async get(actor, name) {
        requireAdministrator(actor, 'read actions');
        return getActionView(s, name);
      },
      setPermission: (actor, name, change) => setActionPermissionByName(s, actor, name, change),
    },
    records: {
      assertType: (type) => void recordType(type),
      list: (caller, typeName, query) => listRecords(s, caller.authorization, recordType(typeName), query),
      // The token check and the row read are one statement; getRecordOf decides once both are in.
      get: (caller, typeName, id) => getRecordOf(s, caller.authorization, recordType(typeName), id),
      create: (actor, typeName, attributes) => createRecord(s, actor, recordType(typeName), attributes),
      update: (actor, typeName, id, attributes) => updateRecord(s, actor, recordType(typeName), id, attributes),
      remove: (actor, typeName, id) => deleteRecord(s, actor, recordType(typeName), id),
      async me(caller) {
        const { principal, session } = await authenticate(s, caller.authorization);
        if (principal.accountId === null) throw new AppError('unauthenticated', 'sign in to read your account');
        const [account, groups, sessions] = await Promise.all([
          reloadAccount(s, principal.accountId),
          groupsOf(store.root, principal.accountId),
          listSessions(s, principal.accountId, session),
        ]);
        return {
          view: viewOf(recordType('user_account'), account),
          meta: {
            groups: groups.map((g) => ({ id: g.reference_id, name: g.name })),
            administrator: principal.isAdmin,
            session: sessions.find((x) => x.current) ?? null,
          },
        };
      },
    },
    groups: {
      async list(actor) {
        requireAdministrator(actor, 'list every group');
        return listGroupViews(s);
      },
      async show(actor, group) {
        requireAdministrator(actor, 'read every group');
        return showGroup(s, group);
      },
      async create(actor, input) {
        requireAdministrator(actor, 'create groups from here');
        const name = parseGroupName(input.name);
        const ownerId = input.owner === undefined ? null : (await findAccountByEmail(s, input.owner)).id;
        const group = await createGroup(s, actor, { name, ownerId, permission: groupPermission(input.permission) });
        return showGroup(s, group.reference_id);
      },
      async remove(actor, group) {
        requireAdministrator(actor, 'delete groups from here');
        const found = await showGroup(s, group);
        await deleteRecord(s, actor, recordType('usergroup'), found.reference_id);
        return found;
      },
      async changeMember(actor, group, email, change) {
        requireAdministrator(actor, 'change groups from here');
        const [found, account] = await Promise.all([resolveGroup(store.root, group), findAccountByEmail(s, email)]);
        const r = await changeMembers(s, actor, found.reference_id, [account.reference_id], change);
        const { members: _members, ...summary } = await showGroup(s, found.reference_id);
        return { group: summary, account: await viewAccount(s, account), changed: r.changed.length > 0 };
      },
      members: async (caller, groupId) => (await listMembers(s, await principalOf(caller), groupId)).map((m) => m.reference_id),
      async changeMembers(actor, groupId, accountIds, change) {
        await changeMembers(s, actor, groupId, accountIds, change);
      },
      shares: async (caller, type, id) => listShares(s, await principalOf(caller), recordType(type), id),
      async changeShares(actor, type, id, groupIds, change) {
        await changeShares(s, actor, recordType(type), id, groupIds, change);
      },
    },
    keys: {
      async list(actor) {
        requireAdministrator(actor, 'list signing keys');
        return (await listSigningKeys(store.root)).map((k) => keyView(k, clock.now()));
      },
      async rotate(actor, alg = 'RS256') {
        requireAdministrator(actor, 'rotate signing keys');
        if (!SIGNING_ALGS.includes(alg as SigningAlg)) throw new AppError('invalid_input', `--alg must be one of ${SIGNING_ALGS.join(', ')}`);
        const r = await rotateKeys(store.root, clock, alg as SigningAlg, config.tokenTtlSeconds);
        await s.keys.refresh(0);
        await s.audit.record('key_rotated', actor, { account: null, kid: r.kid, alg, retired: r.retired.join(',') });
        return { kid: r.kid, alg, retired: r.retired };
      },
      async retire(actor, kid) {
        requireAdministrator(actor, 'retire signing keys');
        const row = await retireSigningKey(store.root, kid);
        await s.keys.refresh(0);
        await s.audit.record('key_retired', actor, { account: null, kid });
        return keyView(row, clock.now());
      },
      jwks: () => s.keys.jwks(),
    },
    clients: {
      async add(actor, input) {
        requireAdministrator(actor, 'register clients');
        return addClient(s, actor, input);
      },
      async list(actor) {
        requireAdministrator(actor, 'list clients');
        return listClientViews(s);
      },
      async show(actor, clientId) {
        requireAdministrator(actor, 'read clients');
        return showClient(s, clientId);
      },
      async remove(actor, clientId) {
        requireAdministrator(actor, 'remove clients');
        return removeClient(s, actor, clientId);
      },
      async rotateSecret(actor, clientId) {
        requireAdministrator(actor, 'rotate client secrets');
        return rotateClientSecret(s, actor, clientId);
      },
    },
    oidc: {
      adapter: (model) => adapterFor(s, model),
      claims: (sub) => claimsOf(s, sub),
      clientPolicy: (clientId, sub) => clientPolicy(s, clientId, sub),
      latestGrant: (sub, clientId) => latestGrant(store.root, sub, clientId),
      pageSession: async (caller) => pageSessionOf(s, await actorOf(caller)),
      signingKeys: () => s.keys.privateJwks(),
      cookieKey: () => oidcCookieKey(store.root),
    },
    audit: {
      async query(actor, filter) {
        requireAdministrator(actor, 'read the audit trail');
        const account = filter.accountEmail === undefined ? filter.account : (await findAccountByEmail(s, filter.accountEmail)).reference_id;
        return s.audit.query({ since: filter.since, limit: filter.limit, account });
      },
    },
    async stats(actor) {
      requireAdministrator(actor, 'read statistics');
      return storeStats(s);
    },
    async statistics(caller) {
      if (!config.publicStatistics) requireAdministrator(await actorOf(caller), 'read statistics');
      const [accounts, db] = await Promise.all([accountStats(s), dbStats(s)]);
      return {
        db,
        accounts,
        auth: {
          signins_ok: s.counters.signinsOk,
          signins_failed: s.counters.signinsFailed,
          signups: s.counters.signups,
          hashes_queued: s.passwords.queued,
          hashes_running: s.passwords.running,
        },
      };
    },
    catalog: () => ({
      actions: actionCatalog().map((a) => ({ onType: a.onType, name: a.name, input: a.input, ignoresToken: a.ignoresToken === true })),
      records: Object.values(RECORD_TYPES).map((t) => ({
        name: t.name,
        attributes: Object.fromEntries(t.attributes.map((c) => [c, (SCHEMA[t.name] as Record<string, ColumnType>)[c]])),
        filterColumns: t.filterColumns,
        sortColumns: t.sortColumns,
        writable: Object.fromEntries(Object.entries(t.fields).map(([k, f]) => [k, f.writer])),
        createAttributes: t.createAttributes ?? null,
        deletable: t.remove !== undefined,
      })),
    }),
    async ready(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      try {
        return await Promise.race([
          // Ready means a write can happen now (contract section 10), not only a read.
          storeWritable(store.root).then(
            () => true,
            () => false,
          ),
          late,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    async metrics(caller) {
      const allowed = config.publicMetrics || (config.metricsToken !== null && bearerIs(caller.authorization, config.metricsToken));
      if (!allowed) requireAdministrator(await actorOf(caller), 'read metrics');
      const c = s.counters;
      return {
        signinsOk: c.signinsOk,
        signinsFailed: c.signinsFailed,
        signups: c.signups,
        lockouts: c.lockouts,
        hashesQueued: s.passwords.queued,
        hashesRunning: s.passwords.running,
        pool: poolStats(store),
      };
    },
    signupStatus: () => signupStatus(store.root),
    filterIndexed: () => filterIndexed(store.root),
    schema: () => schemaStatus(store.root),
    async prune() {
      await Promise.all([
        pruneCounters(store.root, KEEP_COUNTERS_MS),
        pruneTokens(store.root),
        pruneSigningKeys(store.root, KEEP_RETIRED_KEYS_MS),
        pruneLegacySecret(store.root, (config.tokenTtlSeconds + 60) * 1000),
        pruneSessions(store.root, SESSION_IDLE_MS, KEEP_COUNTERS_MS),
        prunePayloads(store.root),
        pruneKnownSignins(store.root, KNOWN_SIGNIN_MS),
      ]);
    },
    settle: () => s.tasks.drain(),
    async close() {
      await s.tasks.drain();
      s.mailer.close();
      await s.passwords.close();
      await store.close();
    },
  };
}

export { backupStore, restoreStore, inspectSnapshot } from './store/backup';
export { holdDataDir } from './store/serve-lock';
export type { SnapshotFacts, RestoreReport } from './store/backup';

/**
 * Copies the store `source` names into the new, empty one `target` names (SQLite to PostgreSQL
 * or back), every table with its ids, and checks every table's row count.
 */
export async function migrateStore(source: Config, target: Config): Promise<CopyReport & { from: string; to: string }> {
  if (target.db === source.db && target.dataDir === source.dataDir) throw new AppError('invalid_input', '--to names the store being copied');
  const from = await openStore(source, systemClock);
  try {
    const to = await openStore(target, systemClock);
    try {
      return { ...(await copyStore(from, to)), from: from.location, to: to.location };
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}
