/**
 * The account page's named-secret forms (credential-forms.ts): make an app password or an API key
 * (shown once on the answer), revoke one.
 */
import type { AccountPages } from './account';
import { chosenLifetime } from './credential-forms';
import { type PageKit, str } from './kit';

export function registerCredentialPages(kit: PageKit, account: AccountPages): void {
  const { core } = kit;
  account.post('/account/app-passwords', async (_ctx, caller, body) => {
    const r = await core.accounts.appPasswords.addMine(caller, { name: str(body, 'appPasswordName') });
    return { appPassword: { name: r.view.name, secret: r.secret } };
  });
  account.post('/account/app-passwords/revoke', async (_ctx, caller, body) => {
    await core.accounts.appPasswords.revokeMine(caller, str(body, 'id'));
    return '/account?done=app_password_revoked';
  });
  account.post('/account/api-keys', async (_ctx, caller, body) => {
    const r = await core.accounts.apiKeys.addMine(caller, { name: str(body, 'apiKeyName'), expiresInSeconds: chosenLifetime(str(body, 'apiKeyExpires')) });
    return { apiKey: { name: r.view.name, secret: r.secret } };
  });
  account.post('/account/api-keys/revoke', async (_ctx, caller, body) => {
    await core.accounts.apiKeys.revokeMine(caller, str(body, 'id'));
    return '/account?done=api_key_revoked';
  });
}

/** The account page's SSH keys and login shell (ssh-key-forms.ts): add a key, remove one, set the shell. */
export function registerSshKeyPages(kit: PageKit, account: AccountPages): void {
  const { core } = kit;
  account.post('/account/ssh-keys', async (_ctx, caller, body) => {
    await core.accounts.ssh.addMine(caller, str(body, 'sshKey'));
    return '/account?done=ssh_key_added#ssh-keys';
  });
  account.post('/account/ssh-keys/remove', async (_ctx, caller, body) => {
    await core.accounts.ssh.removeMine(caller, str(body, 'id'));
    return '/account?done=ssh_key_removed#ssh-keys';
  });
  account.post('/account/shell', async (_ctx, caller, body) => {
    await core.accounts.ssh.setShellMine(caller, str(body, 'shell'));
    return '/account?done=login_shell#ssh-keys';
  });
}
