/** The administrators' console at /admin (contract section 13): one file per section, on the pages' kit. */
import { AppError } from '../../../errors';
import type { PageKit } from '../kit';
import { consoleKit } from './kit';
import { registerConsoleAccounts } from './accounts';
import { registerConsolePeople } from './people';
import { registerConsoleServices } from './services';
import { registerConsoleSettings } from './settings';
import { registerConsoleWebhooks } from './webhooks';
import { registerConsoleSaml } from './saml';
import { registerConsoleScim } from './scim';
import { registerConsoleSources } from './sources';

export function registerConsole(kit: PageKit): void {
  const c = consoleKit(kit);
  registerConsoleAccounts(kit, c);
  registerConsolePeople(kit, c);
  registerConsoleServices(kit, c);
  registerConsoleSaml(kit, c);
  registerConsoleScim(kit, c);
  registerConsoleSources(kit, c);
  registerConsoleWebhooks(kit, c);
  registerConsoleSettings(kit, c);
  // Any other address under /admin: the same 404 for everyone (administrators see the page-not-found page too).
  kit.router.all('/admin/{*rest}', kit.html_, () => {
    throw new AppError('not_found', 'no such page');
  });
}
