/** What the domain code is handed: built once by openCore, shared by HTTP and CLI. */
import type { Config } from './config';
import type { Logger } from './log';
import type { Store } from './store/connection';
import type { PasswordHasher } from './auth/passwords';
import type { TokenService } from './auth/tokens';
import type { Limiter } from './auth/limits';
import type { Mailer } from './mail/mailer';
import type { Tasks } from './tasks';
import type { Audit } from './audit';

export interface AuthCounters {
  signinsOk: number;
  signinsFailed: number;
  signups: number;
}

export interface Deps {
  readonly config: Config;
  readonly store: Store;
  readonly passwords: PasswordHasher;
  readonly tokens: TokenService;
  readonly logger: Logger;
  readonly counters: AuthCounters;
  readonly limiter: Limiter;
  readonly mailer: Mailer;
  readonly tasks: Tasks;
  readonly audit: Audit;
}
