/**
 * Passkeys on the pages: sign in with one (a button, and the email field's autofill), create an
 * account with one and no password, add, rename and remove them on the account page. Each
 * ceremony runs the same actions as the JSON API (passkey_options, passkey_register,
 * passkey_signin), so every rule is the core's.
 */
import type { Context } from 'koa';
import { assertPlainJson, browserAsset, safeReturn, type Caller } from '../../core';
import { type PageKit, refusal, see, str, type SigninPage } from './kit';
import { t } from './look';
import { isAppError } from '../../errors';
import { endPrevious, guestCaller, pageCaller, storeTokens, tokensIn } from './session';
import { PASSKEY_SCRIPT } from './passkey-script';
import { INTERACTION_PATH } from '../oidc';
import type { AccountPages } from './account';
import type { SignupPage } from './signup';

export function registerPasskeys(kit: PageKit, signinPage: SigninPage, signupPage: SignupPage, account: AccountPages): void {
  const { core, router, names, run, post, postJson } = kit;

  router.get('/assets/webauthn.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = browserAsset('webauthn-browser.js');
  });
  router.get('/assets/passkeys.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = PASSKEY_SCRIPT;
  });

  /** The options of a ceremony, for the page script: a guest's sign-in or signup, or a signed-in account's new passkey. */
  postJson('/passkeys/options', async (ctx) => {
    const body = ctx.request.body;
    const purpose = str(body, 'purpose');
    const caller: Caller = purpose === 'register' ? ((await pageCaller(ctx, core, names)) ?? guestCaller(ctx)) : guestCaller(ctx);
    const attributes: Record<string, unknown> = { purpose };
    for (const f of ['email', 'name', 'password', 'invite']) if (str(body, f)) attributes[f] = str(body, f);
    const result = await run(caller, 'passkey_options', attributes);
    ctx.type = 'application/json';
    ctx.body = { options: result.passkeyOptions };
  });

  /** The browser's answer as the actions read it; a form that was not filled in by the script is refused plainly. */
  const responseOf = (ctx: Context): unknown => {
    let response: unknown;
    try {
      response = JSON.parse(str(ctx.request.body, 'response'));
    } catch {
      return null;
    }
    assertPlainJson(response, 'the passkey response');
    return response;
  };

  post('/signin/passkey', async (ctx) => {
    const returnTo = INTERACTION_PATH.test(str(ctx.request.body, 'return_to')) ? str(ctx.request.body, 'return_to') : undefined;
    const rd = safeReturn(str(ctx.request.body, 'rd'), core.config.publicUrl, core.config.cookieDomain);
    try {
      const previous = await pageCaller(ctx, core, names);
      const tokens = tokensIn(await run(guestCaller(ctx), 'passkey_signin', { response: responseOf(ctx) }));
      if (tokens) storeTokens(ctx, names, tokens);
      await endPrevious(core, previous);
      return see(ctx, returnTo ?? rd ?? '/account');
    } catch (err) {
      await signinPage(ctx, { ...refusal(err), returnTo, rd });
    }
  });

  post('/signup/passkey', async (ctx) => {
    try {
      const tokens = tokensIn(await run(guestCaller(ctx), 'passkey_register', { response: responseOf(ctx) }));
      if (tokens) storeTokens(ctx, names, tokens);
      return see(ctx, '/account?done=welcome');
    } catch (err) {
      // Created, but not signed in (--require-verified-email): said as the password signup says it.
      if (isAppError(err) && err.code === 'email_unverified')
        return signinPage(ctx, { info: t('signup.created', { message: t('pages.passkeys.confirm_first') }) });
      const token = str(ctx.request.body, 'invite');
      // An invitation that cannot be used any more is shown without it; a store outage is a 503, not a refusal.
      const invited = token
        ? await core.invitations.describe(token).catch((e: unknown) => {
            if (isAppError(e) && e.code !== 'unavailable') return null;
            throw e;
          })
        : null;
      await signupPage(ctx, { ...refusal(err), ...(invited ? { invite: { token, email: invited.email } } : {}) });
    }
  });

  account.post('/account/passkeys/add', async (ctx, caller, body) => {
    await run(caller, 'passkey_register', { response: responseOf(ctx), name: str(body, 'name') });
    return '/account?done=passkey_added';
  });
  account.post('/account/passkeys/remove', async (_ctx, caller, body) => {
    await core.passkeys.removeMine(caller, str(body, 'id'));
    return '/account?done=passkey_removed';
  });
  account.post('/account/password-link', async (ctx, caller) => {
    const me = await core.records.me(caller);
    await run(guestCaller(ctx), 'reset_password_request', { email: String((me.view.attributes as { email: string }).email) });
    return '/account?done=password_link';
  });
}
