/**
 * The sign-in page, the code step after a right password for an account with TOTP (the password
 * is typed once: the core holds its proof for this browser while the code is asked), and signing
 * out.
 */
import { t } from './look';
import type { Context } from 'koa';
import { type Caller, safeReturn } from '../../core';
import { isAppError } from '../../errors';
import { field, form, html, Html, notice, page, raw } from './html';
import { DONE, type KnownRefusals, type PageKit, refusal, see, send, str, message } from './kit';
import { clearTokens, csrfToken, endPrevious, ensureDevice, guestCaller, pageCaller, storeTokens } from './session';
import { codeStepPage } from './code-step';
import { INTERACTION_PATH } from '../oidc';
import { ceremonyForm } from './passkey-forms';
import { providerButtons } from './provider-forms';

/** The sign-in form's own refusal, in the reader's language. */
const SIGNIN_REFUSALS: KnownRefusals = { invalid_credentials: 'pages.refused.signin' };

export function registerSignin(kit: PageKit) {
  const { core, router, names, run, html_, post } = kit;
  // ---- Sign in -------------------------------------------------------------------------------
  const signupOpen = async () => (await core.signupStatus()).open;
  /** Where to go after signing in, for forward authentication: only addresses safeReturn allows. */
  const returnAddress = (raw: unknown) => safeReturn(raw, core.config.publicUrl, core.config.cookieDomain);
  const signinPage = async (
    ctx: Context,
    o: { status?: number; error?: string; info?: string; email?: string; returnTo?: string; rd?: string | null } = {},
  ) => {
    const csrf = csrfToken(ctx, names);
    ensureDevice(ctx, names);
    const fields: Html[] = [
      o.returnTo ? html`<input type="hidden" name="return_to" value="${o.returnTo}" />` : raw(''),
      o.rd ? html`<input type="hidden" name="rd" value="${o.rd}" />` : raw(''),
      // "webauthn": the browser offers this site's passkeys in the field's autofill (conditional mediation).
      field('email', t('signin.email'), { type: 'email', autocomplete: 'username webauthn', value: o.email, autofocus: !o.email }),
      field('password', t('signin.password'), { type: 'password', autocomplete: 'current-password', autofocus: Boolean(o.email) }),
    ];
    const byMail = await core.actions.signinByMailOpen();
    const carried = new URLSearchParams({ ...(o.returnTo ? { return_to: o.returnTo } : {}), ...(o.rd ? { rd: o.rd } : {}) }).toString();
    const links = html`<p class="links">
      ${byMail ? html`<a href="/signin/mail${carried ? `?${carried}` : ''}" id="signin-by-mail">${t('signin.by_mail')}</a>` : ''}${
        (await signupOpen()) ? html`<a href="/signup">${t('signin.create')}</a>` : ''
      }<a href="/reset-password">${t('signin.forgot')}</a>
    </p>`;
    // The passkey form carries the same return addresses as the password form.
    const passkey = ceremonyForm(
      'signin',
      '/signin/passkey',
      csrf,
      t('signin.passkey'),
      [
        o.returnTo ? html`<input type="hidden" name="return_to" value="${o.returnTo}" />` : raw(''),
        o.rd ? html`<input type="hidden" name="rd" value="${o.rd}" />` : raw(''),
      ],
      // Autofill offers passkeys as the page opens; not again over a refusal, which stays in view.
      { autofill: !o.error },
    );
    // Every other provider's button carries the same return addresses.
    const others = providerButtons(csrf, await core.providers.buttons(), { returnTo: o.returnTo, rd: o.rd });
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: t('signin.title'), csrf, passkeys: true },
        html`${notice('error', o.error)}${notice('info', o.info)}
          <section>${form('/signin', csrf, t('signin.submit'), fields)}${passkey}${others}${links}</section>`,
      ),
    );
  };

  router.get('/signin', html_, async (ctx) => {
    const rd = returnAddress(ctx.query.rd);
    // Already signed in (the cookie renewed if its access token had expired): straight back to the
    // app; but a recovery link's session answers no app, so for one the form is shown (else the
    // app and this page would send the browser to each other until it ends).
    const caller = await pageCaller(ctx, core, names);
    if (caller && !(rd && (await core.auth.actor(caller)).principal.recovering)) return see(ctx, rd ?? '/account');
    await signinPage(ctx, { info: DONE[String(ctx.query.done)], rd });
  });

  /** Where a sign-in goes afterwards, from a form: an OpenID Connect or SAML sign-in in progress, or an app behind forward authentication. */
  const returnsOf = (body: unknown) => ({
    // Back to an OpenID Connect sign-in after signing in; nowhere else (no open redirect).
    returnTo: INTERACTION_PATH.test(str(body, 'return_to')) ? str(body, 'return_to') : undefined,
    // Or back to an app behind forward authentication, on the cookie domain.
    rd: returnAddress(str(body, 'rd')),
  });
  /** Signed in: the session in the cookie, the one it replaces ended, and on to where the sign-in goes. */
  const signedIn = async (ctx: Context, previous: Caller | null, tokens: { token: string; refreshToken: string }, to: ReturnType<typeof returnsOf>) => {
    storeTokens(ctx, names, { token: tokens.token, refresh: tokens.refreshToken });
    // Signing in again on this browser (another person, or again for prompt=login) ends the
    // session the cookie held: one browser, one page session.
    await endPrevious(core, previous);
    see(ctx, to.returnTo ?? to.rd ?? '/account');
  };
  const codeStep = (ctx: Context, step: string, to: ReturnType<typeof returnsOf>, o: { status?: number; error?: string } = {}) =>
    codeStepPage(ctx, { action: '/signin/code', carried: { step, return_to: to.returnTo, rd: to.rd ?? undefined }, csrf: csrfToken(ctx, names), ...o });

  post('/signin', async (ctx) => {
    const body = ctx.request.body;
    const email = str(body, 'email');
    const to = returnsOf(body);
    try {
      const previous = await pageCaller(ctx, core, names);
      const done = await core.actions.signinStep(guestCaller(ctx), { email, password: str(body, 'password') });
      // The password was right and the account has TOTP: its code, and nothing else, is asked next.
      if ('step' in done) return codeStep(ctx, done.step, to);
      await signedIn(ctx, previous, done.session, to);
    } catch (err) {
      await signinPage(ctx, { ...refusal(err, undefined, SIGNIN_REFUSALS), email, returnTo: to.returnTo, rd: to.rd });
    }
  });

  post('/signin/code', async (ctx) => {
    const body = ctx.request.body;
    const step = str(body, 'step');
    const to = returnsOf(body);
    try {
      const previous = await pageCaller(ctx, core, names);
      await signedIn(ctx, previous, await core.actions.finishSigninStep(guestCaller(ctx), step, str(body, 'otp').trim()), to);
    } catch (err) {
      // A mistyped code (or too many): the same step, saying why. Anything else (an expired step): the sign-in page.
      const code = isAppError(err) ? err.code : null;
      if (code === 'otp_invalid' || code === 'otp_required' || code === 'rate_limited') return codeStep(ctx, step, to, refusal(err));
      await signinPage(ctx, { ...refusal(err), returnTo: to.returnTo, rd: to.rd });
    }
  });

  // ---- Sign in by a mailed code ------------------------------------------------------------------
  const carriedFields = (to: { returnTo?: string; rd?: string | null }) => [
    to.returnTo ? html`<input type="hidden" name="return_to" value="${to.returnTo}" />` : raw(''),
    to.rd ? html`<input type="hidden" name="rd" value="${to.rd}" />` : raw(''),
  ];
  const mailPage = async (
    ctx: Context,
    o: { status?: number; error?: string; email?: string; handle?: string; returnTo?: string; rd?: string | null } = {},
  ) => {
    const csrf = csrfToken(ctx, names);
    ensureDevice(ctx, names);
    const to = { returnTo: o.returnTo, rd: o.rd };
    const body =
      o.handle === undefined
        ? html`<section>
            <p>${t('signin.code.intro')}</p>
            ${form('/signin/mail', csrf, t('signin.code.ask'), [
              ...carriedFields(to),
              field('email', t('signin.email'), { type: 'email', autocomplete: 'username', value: o.email, autofocus: true }),
            ])}
            <p class="links"><a href="/signin">${t('signin.code.other_way')}</a></p>
          </section>`
        : html`${notice('info', t('signin.code.sent'))}
            <section>
              ${form('/signin/mail/code', csrf, t('signin.submit'), [
                ...carriedFields(to),
                html`<input type="hidden" name="request" value="${o.handle}" />`,
                field('code', t('signin.code.field'), {
                  autocomplete: 'one-time-code',
                  autofocus: true,
                  maxlength: 12,
                  hint: t('signin.code.hint'),
                }),
              ])}
              <p class="links"><a href="/signin/mail">${t('signin.code.again')}</a><a href="/signin">${t('signin.code.other_way')}</a></p>
            </section>`;
    send(ctx, o.status ?? 200, page({ title: t('signin.code.title'), csrf }, html`${notice('error', o.error)}${body}`));
  };
  const mailOpen = async (ctx: Context) => {
    if (await core.actions.signinByMailOpen()) return true;
    send(
      ctx,
      404,
      page(
        { title: t('signin.title') },
        html`${notice('error', t('signin.code.off'))}
          <section>
            <p class="links"><a href="/signin">${t('layout.signin')}</a></p>
          </section>`,
      ),
    );
    return false;
  };
  router.get('/signin/mail', html_, async (ctx) => {
    if (!(await mailOpen(ctx))) return;
    const to = {
      returnTo: INTERACTION_PATH.test(String(ctx.query.return_to ?? '')) ? String(ctx.query.return_to) : undefined,
      rd: returnAddress(ctx.query.rd),
    };
    await mailPage(ctx, to);
  });
  post('/signin/mail', async (ctx) => {
    const body = ctx.request.body;
    const email = str(body, 'email');
    const to = returnsOf(body);
    try {
      const { handle } = await core.actions.mailCodeRequest(guestCaller(ctx), email);
      await mailPage(ctx, { handle, ...to });
    } catch (err) {
      await mailPage(ctx, { ...refusal(err), email, ...to });
    }
  });
  /** A code typed (or the mailed link's): signed in, the TOTP step, or the page again saying why. */
  const mailSignin = async (
    ctx: Context,
    handle: string,
    code: string,
    to: ReturnType<typeof returnsOf>,
    again: (o: { status?: number; error?: string }) => Promise<void>,
  ) => {
    try {
      const previous = await pageCaller(ctx, core, names);
      const done = await core.actions.mailCodeSignin(guestCaller(ctx), handle, code);
      if ('step' in done) return codeStep(ctx, done.step, to);
      await signedIn(ctx, previous, done.session, to);
    } catch (err) {
      await again(refusal(err));
    }
  };
  post('/signin/mail/code', async (ctx) => {
    const body = ctx.request.body;
    const handle = str(body, 'request');
    const to = returnsOf(body);
    await mailSignin(ctx, handle, str(body, 'code'), to, (o) => mailPage(ctx, { ...o, handle, ...to }));
  });
  /** The mailed link: the request in the query, the code in the fragment (the page's script moves it into the form). */
  const linkPage = async (ctx: Context, handle: string, o: { status?: number; error?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    const where = await core.actions.mailCodeBrowser(guestCaller(ctx), handle);
    const body =
      where === 'this'
        ? html`<section data-with-token>
            <p>${t('signin.code.link_intro')}</p>
            ${form('/signin/mail/link', csrf, t('signin.submit'), [
              html`<input type="hidden" name="request" value="${handle}" />`,
              field('token', t('signin.code.field'), { autocomplete: 'one-time-code', maxlength: 12, hint: t('signin.code.link_hint') }),
            ])}
          </section>`
        : where === 'other'
          ? html`${notice('error', t('signin.code.other_browser'))}
              <section>
                <p class="links"><a href="/signin/mail">${t('signin.code.ask_here')}</a><a href="/signin">${t('signin.code.other_way')}</a></p>
              </section>`
          : html`${notice('error', t('signin.code.spent'))}
              <section>
                <p class="links"><a href="/signin/mail">${t('signin.code.again')}</a><a href="/signin">${t('signin.code.other_way')}</a></p>
              </section>`;
    send(
      ctx,
      o.status ?? (where === 'this' ? 200 : 400),
      page({ title: t('signin.code.title'), csrf, script: where === 'this' }, html`${notice('error', o.error)}${body}`),
    );
  };
  router.get('/signin/mail/link', html_, async (ctx) => {
    if (!(await mailOpen(ctx))) return;
    await linkPage(ctx, String(ctx.query.request ?? '').slice(0, 64));
  });
  post('/signin/mail/link', async (ctx) => {
    const body = ctx.request.body;
    const handle = str(body, 'request').slice(0, 64);
    await mailSignin(ctx, handle, str(body, 'token'), { returnTo: undefined, rd: null }, (o) => linkPage(ctx, handle, o));
  });

  post('/signout', async (ctx) => {
    const caller = await pageCaller(ctx, core, names);
    if (caller) await run(caller, 'signout', {}).catch((err: unknown) => void message(err));
    clearTokens(ctx, names);
    see(ctx, '/signin?done=signed_out');
  });

  return signinPage;
}
