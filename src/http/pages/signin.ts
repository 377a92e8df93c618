/** The sign-in page (and the TOTP step after the password), and signing out. */
import type { Context } from 'koa';
import { safeReturn } from '../../core';
import { isAppError } from '../../errors';
import { field, form, html, Html, notice, page, raw } from './html';
import { DONE, type PageKit, refusal, see, send, str, message } from './kit';
import { clearTokens, csrfToken, endPrevious, ensureDevice, guestCaller, pageCaller, storeTokens, tokensIn } from './session';
import { INTERACTION_PATH } from '../oidc';
import { ceremonyForm } from './passkey-forms';
import { providerButtons } from './provider-forms';

export function registerSignin(kit: PageKit) {
  const { core, router, names, run, html_, post } = kit;
  // ---- Sign in -------------------------------------------------------------------------------
  const signupOpen = async () => (await core.signupStatus()).open;
  /** Where to go after signing in, for forward authentication: only addresses safeReturn allows. */
  const returnAddress = (raw: unknown) => safeReturn(raw, core.config.publicUrl, core.config.cookieDomain);
  const signinPage = async (
    ctx: Context,
    o: { status?: number; error?: string; info?: string; email?: string; otp?: boolean; returnTo?: string; rd?: string | null } = {},
  ) => {
    const csrf = csrfToken(ctx, names);
    ensureDevice(ctx, names);
    const fields: Html[] = [
      o.returnTo ? html`<input type="hidden" name="return_to" value="${o.returnTo}" />` : raw(''),
      o.rd ? html`<input type="hidden" name="rd" value="${o.rd}" />` : raw(''),
      // "webauthn": the browser offers this site's passkeys in the field's autofill (conditional mediation).
      field('email', 'Email', { type: 'email', autocomplete: 'username webauthn', value: o.email, autofocus: !o.email }),
      field('password', 'Password', { type: 'password', autocomplete: 'current-password', autofocus: Boolean(o.email) && !o.otp }),
    ];
    if (o.otp) {
      fields.push(
        field('otp', 'Authentication code', {
          inputmode: 'numeric',
          autocomplete: 'one-time-code',
          required: false,
          autofocus: true,
          hint: 'The 6-digit code from your authenticator app. Lost it? Enter a recovery code below instead.',
        }),
        field('recovery_code', 'Recovery code', { required: false, autocomplete: 'off' }),
      );
    }
    const links = html`<p class="links">
      ${(await signupOpen()) ? html`<a href="/signup">Create an account</a>` : ''}<a href="/reset-password">Forgot your password?</a>
    </p>`;
    // The passkey form carries the same return addresses as the password form.
    const passkey = o.otp
      ? ''
      : ceremonyForm(
          'signin',
          '/signin/passkey',
          csrf,
          'Sign in with a passkey',
          [
            o.returnTo ? html`<input type="hidden" name="return_to" value="${o.returnTo}" />` : raw(''),
            o.rd ? html`<input type="hidden" name="rd" value="${o.rd}" />` : raw(''),
          ],
          // Autofill offers passkeys as the page opens; not again over a refusal, which stays in view.
          { autofill: !o.error },
        );
    // Every other provider's button carries the same return addresses.
    const others = o.otp ? html`` : providerButtons(csrf, await core.providers.buttons(), { returnTo: o.returnTo, rd: o.rd });
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: 'Sign in', csrf, passkeys: !o.otp },
        html`${notice('error', o.error)}${notice('info', o.info)}
          <section>${form('/signin', csrf, 'Sign in', fields)}${passkey}${others}${links}</section>`,
      ),
    );
  };

  router.get('/signin', html_, async (ctx) => {
    const rd = returnAddress(ctx.query.rd);
    // Already signed in (the cookie renewed if its access token had expired): straight back to the app.
    if (await pageCaller(ctx, core, names)) return see(ctx, rd ?? '/account');
    await signinPage(ctx, { info: DONE[String(ctx.query.done)], rd });
  });

  post('/signin', async (ctx) => {
    const body = ctx.request.body;
    const email = str(body, 'email');
    const attributes: Record<string, unknown> = { email, password: str(body, 'password') };
    if (str(body, 'otp')) attributes.otp = str(body, 'otp').trim();
    if (str(body, 'recovery_code')) attributes.recovery_code = str(body, 'recovery_code').trim();
    // Back to an OpenID Connect sign-in after signing in; nowhere else (no open redirect).
    const returnTo = INTERACTION_PATH.test(str(body, 'return_to')) ? str(body, 'return_to') : undefined;
    // Or back to an app behind forward authentication, on the cookie domain.
    const rd = returnAddress(str(body, 'rd'));
    try {
      const previous = await pageCaller(ctx, core, names);
      const tokens = tokensIn(await run(guestCaller(ctx), 'signin', attributes));
      if (tokens) storeTokens(ctx, names, tokens);
      // Signing in again on this browser (another person, or again for prompt=login) ends the
      // session the cookie held: one browser, one page session.
      await endPrevious(core, previous);
      return see(ctx, returnTo ?? rd ?? '/account');
    } catch (err) {
      const code = isAppError(err) ? err.code : null;
      const needsCode = code === 'otp_required' || code === 'otp_invalid';
      await signinPage(ctx, {
        ...refusal(err),
        ...(code === 'otp_required' ? { error: 'Enter the code from your authenticator app (and your password again).' } : {}),
        email,
        otp: needsCode,
        returnTo,
        rd,
      });
    }
  });

  post('/signout', async (ctx) => {
    const caller = await pageCaller(ctx, core, names);
    if (caller) await run(caller, 'signout', {}).catch((err: unknown) => void message(err));
    clearTokens(ctx, names);
    see(ctx, '/signin?done=signed_out');
  });

  return signinPage;
}
