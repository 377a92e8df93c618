/**
 * The core: built once from the configuration and handed to both front ends (the HTTP server
 * and the admin commands). It combines the domains' operations (accounts, actions, records,
 * groups, keys, clients, oidc, and what operators read); each domain checks its own rules,
 * administrators through access/caller.ts's one requireAdministrator. The services behind them
 * (store, hashing, tokens, limits, mail, audit) stay inside. Front ends translate requests and
 * arguments into these calls, and their answers back.
 */
import { openMessages, type Messages } from './i18n';
import { defaultPublicUrl, type Config } from './config';
import { Clock, systemClock } from './clock';
import { createLogger, Logger } from './log';
import { SHELL, type Actor, type Caller } from './actor';
import type { Services } from './services';
import { dataDirWarning, openStore, schemaStatus, SchemaStatus, Store } from './store/connection';
import { PasswordHasher } from './auth/passwords';
import { TokenService } from './auth/tokens';
import { KeyRing } from './runtime/key-ring';
import { Limiter } from './runtime/limiter';
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
import { deliveryOperations, type DeliveryOperations } from './deliveries/operations';
import { directoryOperations, type DirectoryOperations } from './directory/operations';
import { samlOperations, type SamlOperations } from './saml/operations';
import { scimOperations, type ScimOperations } from './scim/operations';
import { importerOperations, type ImporterOperations } from './import/operations';
import { sourceOperations, type SourceOperations } from './sources/operations';
import { targetPolicy } from './runtime/targets';
import { Sender } from './runtime/sender';
import { checkPasswordAtSource } from './sources/directory-client';
import { push } from './deliveries/scim-push';
import { logoutSigner } from './oidc/logout';
import { configFileOperations, type ConfigFileOperations } from './config-file/operations';
import { lookOperations, type LookOperations } from './look';
import { recordRunning, withServerFacts } from './deliveries/running';

// The vocabulary front ends name (views, inputs, a few pure helpers), re-exported in one place.
export * from './core-vocabulary';

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
  /** Pages and mails in the reader's language: the catalogues with the operator's overrides. */
  readonly messages: Messages;
  readonly accounts: AccountOperations;
  readonly actions: ActionOperations;
  readonly records: RecordOperations;
  readonly groups: GroupOperations;
  /** Configuration as a file: export, plan, apply, schema. */
  readonly configFile: ConfigFileOperations;
  /** The operator's look (flags, else a configuration file or the console, else Gatehouse's own). */
  readonly look: LookOperations;
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
  /** Webhook endpoints and the delivery queue (mail and webhooks). */
  readonly deliveries: DeliveryOperations;
  /** The LDAP directory's reads and binds (the LDAP front end's core). */
  readonly directory: DirectoryOperations;
  /** The SAML 2.0 identity provider: service providers, its certificate, and the browser's sign-in. */
  readonly saml: SamlOperations;
  /** SCIM 2.0: tokens, and the /scim/v2 service provider's reads. */
  readonly scim: ScimOperations;
  /** Moving in: people and groups from another server's export or a CSV (`gatehouse import`). */
  readonly importer: ImporterOperations;
  /** Directory sources (LDAP, Active Directory): people and groups synced in. */
  readonly sources: SourceOperations;
  readonly audit: OperatorOperations['audit'];
  /** The actions and record types the HTTP API serves, with their attributes. */
  catalog(): ApiCatalog;
  /** Where the store is, for logs (no credentials). */
  readonly storeLocation: string;
  /** True when this opening made a new, empty store (a first start, or a mistyped data folder). */
  readonly storeCreated: boolean;
  readonly dialect: Store['dialect'];
  /**
   * The server is bound at `url`. Without a public URL setting, links, the token issuer and the
   * OpenID issuer name this address from now on (so port 0 never yields `:0`), `localhost` for a
   * loopback one (passkeys need a host name).
   */
  listening(url: string): void;
  /** This process is the server: record its public URL and mail route for the shell, and deliver the queue. */
  serving(): Promise<void>;
  /** Waits for background work and, in a server, for every message due now to be tried. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface CoreOptions {
  logger?: Logger;
  clock?: Clock;
  /** A server: whether another server held the (SQLite) data directory when this one started. */
  othersRunning?: boolean;
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
    const mailer = createMailer(config, logger);
    const sender = new Sender(store, mailer, logger, clock, targetPolicy(config.webhookAllowPrivate), push, logoutSigner(store, tokens));
    s = {
      // An admin command links to the running server's public URL unless it is given one.
      config: await withServerFacts(store, config),
      clock,
      logger,
      store,
      passwords,
      keys,
      tokens,
      limiter: new Limiter(store.root, config, clock),
      mailer,
      sender,
      tasks: new Tasks(logger),
      audit: new Audit(store, logger, clock, () => sender.nudge()),
      counters: { signinsOk: 0, signinsFailed: 0, signups: 0, lockouts: 0, providerSignins: {}, ldap: { binds: {}, searches: {} }, saml: {} },
      directoryPasswords: checkPasswordAtSource,
      messages: openMessages(config.defaultLanguage ?? 'en', config.messages),
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
    messages: s.messages,
    accounts: accountOperations(s),
    actions: actionOperations(s),
    records: recordOperations(s),
    groups: groupOperations(s),
    configFile: configFileOperations(s),
    look: lookOperations(s),
    keys: keyOperations(s),
    clients: clientOperations(s),
    oidc: oidcOperations(s),
    apps: appOperations(s),
    passkeys: passkeyOperations(s),
    invitations: invitationOperations(s),
    providers: providerOperations(s),
    deliveries: deliveryOperations(s),
    saml: samlOperations(s),
    scim: scimOperations(s),
    importer: importerOperations(s),
    sources: sourceOperations(s),
    directory: directoryOperations(s),
    ...operatorOperations(s),
    catalog: () => ({ actions: describeActions(), records: describeRecordTypes() }),
    async serving() {
      await recordRunning(store, s.config, s.mailer, logger, store.dialect === 'sqlite' ? (options.othersRunning ?? false) : null);
      await s.sender.start();
    },
    async settle() {
      await s.tasks.drain();
      await s.sender.flush();
    },
    async close() {
      await s.tasks.drain();
      await s.sender.stop();
      s.mailer.close();
      await s.passwords.close();
      await store.close();
    },
  };
}

export { backupStore, restoreStore, inspectSnapshot } from './store/backup';
export { holdDataDir, othersHoldDataDir } from './store/serve-lock';
export type { SnapshotFacts, RestoreReport } from './store/backup';
export type { Plan as ConfigPlan, PlanLine as ConfigPlanLine, ManagedLookup } from './config-file/operations';
export { readConfigText } from './config-file/document';
export { CONFIG_SCHEMA } from './config-file/schema';
/** The rule of every address Gatehouse sends requests to (the shell fetches SP metadata by it). */
export { outboundUrl, shownUrl } from './runtime/targets';

export { migrateStore } from './store/copy';
/** Bounds jobs at once (the LDAP front end's searches). */
export { Semaphore } from './auth/semaphore';
export { IMPORT_FORMATS, type ImportFormat, type ImportReport } from './import/operations';
export type { SourceInput, SourceView, SyncReport } from './sources/operations';
export type { NewProvider } from './upstream/providers';

/** `migrate status`: the store's migrations beside this executable's, read without migrating (a newer store too). */
export async function readSchemaStatus(config: Config): Promise<SchemaStatus> {
  const store = await openStore(config, systemClock, { migrate: false });
  try {
    return await schemaStatus(store.root);
  } finally {
    await store.close();
  }
}
export { chooseLanguage, LANGUAGES, isLanguage, type Language, type MessageKey, type Translator, type Messages } from './i18n';
