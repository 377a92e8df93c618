/** The account page's app-password forms: make one (shown once on the answer), revoke one. */
import type { AccountPages } from './account';
import { type PageKit, str } from './kit';

export function registerAppPasswordPages(kit: PageKit, account: AccountPages): void {
  const { core } = kit;
  account.post('/account/app-passwords', async (_ctx, caller, body) => {
    const r = await core.accounts.appPasswords.addMine(caller, { name: str(body, 'appPasswordName') });
    return { appPassword: { name: r.view.name, secret: r.secret } };
  });
  account.post('/account/app-passwords/revoke', async (_ctx, caller, body) => {
    await core.accounts.appPasswords.revokeMine(caller, str(body, 'id'));
    return '/account?done=app_password_revoked';
  });
}
