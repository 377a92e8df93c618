/**
 * The core: built once from the configuration and handed to both front ends (the HTTP server
 * and the admin commands). It combines the domains' operations (accounts, actions, records,
 * groups, keys, clients, oidc, and what operators read); each domain checks its own rules,
 * administrators through access/caller.ts's one requireAdministrator. The services behind them
 * (store, hashing, tokens, limits, mail, audit) stay inside. Front ends translate requests and
 * arguments into these calls, and their answers back.
 */
import { defaultPublicUrl, type Config } from './config';
import { Clock, systemClock } from './clock';
import { createLogger, Logger } from './log';
import { SHELL, type Actor, type Caller } from './actor';
import type { Services } from './services';
import { dataDirWarning, openStore, Store } from './store/connection';
import { PasswordHasher } from './auth/passwords';
import { TokenService } from './auth/tokens';
import { KeyRing } from './keys/ring';
import { Limiter } from './access/limits';
import { actorOf } from './access/caller';
import { createMailer } from './mail/mailer';
import { Tasks } from './tasks';
import { Audit } from './audit';
import { accountOperations, type AccountOperations } from './accounts/operations';
import { actionOperations, describeActions, type ActionOperations } from './actions/operations';
import { describeRecordTypes, recordOperations, type RecordOperations, type RecordTypeDescription } from './records/operations';
import { groupOperations, type GroupOperations } from './groups/operations';
import { keyOperations, type KeyOperations } from './keys/operations';
import { clientOperations, oidcOperations, type ClientOperations, type OidcOperations } from './oidc/operations';
import { operatorOperations, type OperatorOperations } from './operator';
import { appOperations, type AppOperations } from './apps/operations';
import { passkeyOperations, type PasskeyOperations } from './passkeys/operations';
import { invitationOperations, type InvitationOperations } from './invitations/operations';
import { providerOperations, type ProviderOperations } from './upstream/operations';

export { assertStoreExists, prepareDataDir } from './store/connection';
export { PAGE_SIZE } from './records/operations';
export { safeReturn } from './apps/rules';
export { browserAsset } from './native/lazy';
export { describe as describePermission } from './permission/bits';
export type { Actor, Caller } from './actor';
export type { AccountInput } from './accounts/operations';
export type { MetricsSnapshot } from './operator';
export type { AccountView } from './accounts/views';
export type { ActionResult } from './actions/types';
export type { ActionPermissionView, PermissionChange } from './records/action-permissions';
export type { RecordPage, RecordView } from './records/service';
export type { Query } from './records/query';
export type { AuditRow, AuditFilter } from './store/audit';
export type { BootstrapOutcome } from './accounts/bootstrap';
export type { GroupView, GroupDetail } from './groups/manage';
export type { SharedGroup } from './records/sharing';
export type { MemberChange } from './groups/members';
export type { KeyView } from './keys/operations';
export type { PublicJwk } from './auth/keys';
export type { SessionView } from './accounts/sessions';
export type { ClientView, NewClient } from './oidc/clients';
export type { OidcClaims, ProviderAdapter } from './oidc/support';
export type { SchemaStatus } from './store/connection';
export type { AppView, ForwardDecision, NewAppInput } from './apps/operations';
export type { PasskeyView } from './passkeys/operations';
export type { InvitationView, NewInvitation } from './invitations/operations';
export type { IdentityView, NewProvider, ProviderView } from './upstream/operations';

/** What the HTTP API serves, described from the definitions the handlers use (/openapi.json). */
export interface ApiCatalog {
  actions: ReturnType<typeof describeActions>;
  records: RecordTypeDescription[];
}

export interface Core extends Omit<OperatorOperations, 'audit'> {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The operator at the shell: the actor of every admin command. */
  readonly shell: Actor;
  readonly auth: {
    /** The actor behind a request: a guest without credentials, 401 for a bad token. */
    actor(caller: Caller): Promise<Actor>;
  };
  readonly accounts: AccountOperations;
  readonly actions: ActionOperations;
  readonly records: RecordOperations;
  readonly groups: GroupOperations;
  readonly keys: KeyOperations;
  readonly clients: ClientOperations;
  readonly oidc: OidcOperations;
  /** Apps behind reverse proxies (forward authentication). */
  readonly apps: AppOperations;
  /** Passkeys of the caller (the account page) and of any account (administrators, the shell). */
  readonly passkeys: PasskeyOperations;
  /** Invitations: signup for one address, while guest signup stays closed. */
  readonly invitations: InvitationOperations;
  /** Upstream OpenID Connect providers: sign in with another provider, linked identities. */
  readonly providers: ProviderOperations;
  readonly audit: OperatorOperations['audit'];
  /** The actions and record types the HTTP API serves, with their attributes. */
  catalog(): ApiCatalog;
  /** Where the store is, for logs (no credentials). */
  readonly storeLocation: string;
  /** True when this opening made a new, empty store (a first start, or a mistyped --data-dir). */
  readonly storeCreated: boolean;
  readonly dialect: Store['dialect'];
  /**
   * The server is bound at `url`. Without --public-url, links, the token issuer and the OpenID
   * issuer name this address from now on (so `--port 0` never yields `:0`), `localhost` for a
   * loopback one (passkeys need a host name).
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

export async function openCore(config: Config, options: CoreOptions = {}): Promise<Core> {
  const logger = options.logger ?? createLogger();
  const clock = options.clock ?? systemClock;
  const store = await openStore(config, clock);
  const dirWarning = dataDirWarning(config);
  if (dirWarning) logger.warn('data_dir_open', { message: dirWarning });
  let s: Services;
  try {
    const keys = new KeyRing(store.root, clock, config.tokenTtl);
    await keys.open();
    const tokens = new TokenService(keys, () => s.config.publicUrl, config.tokenTtl, clock);
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
      mailer: createMailer(config, logger),
      tasks: new Tasks(logger),
      audit: new Audit(store, logger),
      counters: { signinsOk: 0, signinsFailed: 0, signups: 0, lockouts: 0, providerSignins: {} },
    };
  } catch (err) {
    await store.close();
    throw err;
  }

  return {
    get config() {
      return s.config;
    },
    listening(url) {
      if (!s.config.publicUrlSet) s.config = Object.freeze({ ...s.config, publicUrl: defaultPublicUrl(new URL(url).hostname, Number(new URL(url).port)) });
    },
    clock,
    logger,
    shell: SHELL,
    storeLocation: store.location,
    storeCreated: store.created,
    dialect: store.dialect,
    auth: { actor: (caller) => actorOf(s, caller) },
    accounts: accountOperations(s),
    actions: actionOperations(s),
    records: recordOperations(s),
    groups: groupOperations(s),
    keys: keyOperations(s),
    clients: clientOperations(s),
    oidc: oidcOperations(s),
    apps: appOperations(s),
    passkeys: passkeyOperations(s),
    invitations: invitationOperations(s),
    providers: providerOperations(s),
    ...operatorOperations(s),
    catalog: () => ({ actions: describeActions(), records: describeRecordTypes() }),
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

export { migrateStore } from './store/copy';
