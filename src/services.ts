/**
 * What the use cases are handed, internal to the core: the store and the services built on it.
 * Front ends never see this; they call the operations openCore returns.
 */
import type { Messages } from './i18n';
import type { Config } from './config';
import type { Clock } from './clock';
import type { Logger } from './log';
import type { Store } from './store/connection';
import type { SourceRow } from './store/sources';
import type { PasswordHasher } from './auth/passwords';
import type { TokenService } from './auth/tokens';
import type { KeyRing } from './runtime/key-ring';
import type { Limiter } from './runtime/limiter';
import type { Mailer } from './mail/mailer';
import type { Tasks } from './tasks';
import type { Audit } from './audit';
import type { Sender } from './runtime/sender';

export interface AuthCounters {
  signinsOk: number;
  signinsFailed: number;
  signups: number;
  /** Lockouts this failure count caused (per address pair, account-wide, second factor). */
  lockouts: number;
  /** Sign-ins through each upstream provider since start: completed, and refused at the callback. */
  providerSignins: Record<string, { ok: number; refused: number }>;
  /** LDAP since start: binds by outcome (ok, failed) and searches by outcome (ok, refused, not_found, failed). */
  ldap: { binds: Record<string, number>; searches: Record<string, number> };
  /** SAML sign-ins since start by outcome: ok (a Response sent), refused (the gate, a disabled account). */
  saml: Record<string, number>;
}

export interface Services {
  /** Replaced once, when the server is bound and --public-url was not given (Core.listening). */
  config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly passwords: PasswordHasher;
  readonly keys: KeyRing;
  readonly tokens: TokenService;
  readonly limiter: Limiter;
  readonly mailer: Mailer;
  /** Delivers queued mail and webhooks; running in `serve` only (start()), idle in an admin command. */
  readonly sender: Sender;
  readonly tasks: Tasks;
  readonly audit: Audit;
  readonly counters: AuthCounters;
  /**
   * A synced person's password checked by a bind at their directory source (src/sources/directory-client.ts,
   * handed in by the core: the sources domain sits above the accounts, whose sign-in asks it).
   */
  /** The message catalogues (with the operator's overrides): mails in the account's language. */
  readonly messages: Messages;
  readonly directoryPasswords: (source: SourceRow, entryId: string, password: string) => Promise<'ok' | 'wrong' | 'gone'>;
}
