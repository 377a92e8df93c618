/**
 * The pages: sign in, sign up (while open to guests), confirm an email address, reset a
 * password, and the account page (profile, password, email, TOTP with a QR code and recovery
 * codes, sessions, sign out). Each form post runs the same action as the API, through the core,
 * so every rule (limits, lockouts, TOTP, verified email, disabled accounts) is the same; errors
 * show as the action's own message above the form.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, isAppError } from '../../errors';
import type { Caller, Core, SessionView } from '../../core';
import { errorStyle, STATUS } from '../errors';
import { lazyKoaBody } from '../body';
import { FAVICON, SCRIPT, STYLESHEET } from './assets';
import { field, form, html, Html, notice, page, PAGE_CSP, raw } from './html';
import { INTERACTION_PATH, type OidcProvider } from '../oidc';
import { assertSameSite, clearTokens, cookieNames, csrfToken, ensureDevice, guestCaller, pageCaller, storeTokens, tokenCaller, tokensIn } from './session';

type Item = { ResponseType: string; Attributes: Record<string, unknown> };

function send(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = body;
}

const see = (ctx: Context, location: string) => {
  ctx.status = 303;
  ctx.redirect(location);
};

const str = (body: unknown, key: string): string => {
  const v = (body as Record<string, unknown> | undefined)?.[key];
  return typeof v === 'string' ? v : '';
};

/** Refusals whose API message names attributes (passwordConfirm): what a page says instead. */
const PAGE_MESSAGES: Partial<Record<string, string>> = {
  password_mismatch: 'The two passwords differ; type the same one twice.',
};

/** An action's refusal as the page shows it; anything else is not ours to explain. */
const message = (err: unknown): string => {
  if (!isAppError(err)) throw err;
  return PAGE_MESSAGES[err.code] ?? err.message.charAt(0).toUpperCase() + err.message.slice(1);
};

/** A refusal's status and message, for a form shown again with it. */
const refusal = (err: unknown): { status: number; error: string } => ({ error: message(err), status: STATUS[(err as AppError).code] });

/** Fixed success messages by name (redirects carry only the name: no reflected text). */
const DONE: Record<string, string> = {
  welcome: 'Your account is ready.',
  password: 'Password changed. Other sessions are signed out.',
  email: 'Email address changed. Other sessions are signed out; confirm the new address with the link we sent.',
  verification: 'A confirmation link is on its way to your address.',
  totp_off: 'Two-factor authentication is off.',
  revoked: 'The session is signed out.',
  signed_out: 'You are signed out.',
  everywhere: 'Every session is signed out.',
  reset: 'Your password is changed. Sign in with the new one.',
};

export function createPageRouter(core: Core, oidc?: OidcProvider): Router {
  const router = new Router();
  const names = cookieNames(core.config.publicUrl);
  // The rule as the server applies it (--password-min-length), not a copy of its default.
  const passwordHint = `At least ${core.config.passwordMinLength} characters; a long phrase is best.`;
  const parseForm = lazyKoaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: '16kb' });
  const run = (caller: Caller, name: string, attributes: Record<string, unknown>) => core.actions.run(caller, 'user_account', name, attributes);
  const html_ = errorStyle('html');
  /** A form post: same site and CSRF token checked before anything runs. */
  const post = (path: string, handler: (ctx: Context) => Promise<void>) =>
    router.post(path, html_, parseForm, async (ctx) => {
      assertSameSite(ctx, names, core.config.publicUrl, str(ctx.request.body, 'csrf'));
      await handler(ctx);
    });

  router.get('/assets/gatehouse.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = STYLESHEET;
  });
  router.get('/assets/gatehouse.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = SCRIPT;
  });
  for (const path of ['/assets/favicon.svg', '/favicon.ico']) {
    router.get(path, (ctx) => {
      ctx.type = 'image/svg+xml';
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = FAVICON;
    });
  }
  router.get('/', html_, (ctx) => see(ctx, '/account'));

  // ---- Sign in -------------------------------------------------------------------------------
  const signupOpen = async () => (await core.signupStatus()).open;
  const signinPage = async (ctx: Context, o: { status?: number; error?: string; info?: string; email?: string; otp?: boolean; returnTo?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    ensureDevice(ctx, names);
    const fields: Html[] = [
      o.returnTo ? html`<input type="hidden" name="return_to" value="${o.returnTo}" />` : raw(''),
      field('email', 'Email', { type: 'email', autocomplete: 'username', value: o.email, autofocus: !o.email }),
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
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: 'Sign in', csrf },
        html`${notice('error', o.error)}${notice('info', o.info)}
          <section>${form('/signin', csrf, 'Sign in', fields)}${links}</section>`,
      ),
    );
  };

  router.get('/signin', html_, async (ctx) => {
    if (await pageCaller(ctx, core, names)) return see(ctx, '/account');
    await signinPage(ctx, { info: DONE[String(ctx.query.done)] });
  });

  post('/signin', async (ctx) => {
    const body = ctx.request.body;
    const email = str(body, 'email');
    const attributes: Record<string, unknown> = { email, password: str(body, 'password') };
    if (str(body, 'otp')) attributes.otp = str(body, 'otp').trim();
    if (str(body, 'recovery_code')) attributes.recovery_code = str(body, 'recovery_code').trim();
    // Back to an OpenID Connect sign-in after signing in; nowhere else (no open redirect).
    const returnTo = INTERACTION_PATH.test(str(body, 'return_to')) ? str(body, 'return_to') : undefined;
    try {
      const previous = await pageCaller(ctx, core, names);
      const tokens = tokensIn(await run(guestCaller(ctx), 'signin', attributes));
      if (tokens) storeTokens(ctx, names, tokens);
      // Signing in again on this browser (another person, or again for prompt=login) ends the
      // session the cookie held: one browser, one page session.
      if (previous) await run(previous, 'signout', {}).catch(() => undefined);
      return see(ctx, returnTo ?? '/account');
    } catch (err) {
      const code = isAppError(err) ? err.code : null;
      const needsCode = code === 'otp_required' || code === 'otp_invalid';
      await signinPage(ctx, {
        ...refusal(err),
        ...(code === 'otp_required' ? { error: 'Enter the code from your authenticator app (and your password again).' } : {}),
        email,
        otp: needsCode,
        returnTo,
      });
    }
  });

  // ---- Sign up -------------------------------------------------------------------------------
  const signupPage = async (ctx: Context, o: { status?: number; error?: string; info?: string; name?: string; email?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    const fields = [
      field('name', 'Name', { autocomplete: 'name', value: o.name, autofocus: true, maxlength: 100 }),
      field('email', 'Email', { type: 'email', autocomplete: 'email', value: o.email }),
      field('password', 'Password', { type: 'password', autocomplete: 'new-password', hint: passwordHint }),
      field('passwordConfirm', 'Password again', { type: 'password', autocomplete: 'new-password' }),
    ];
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: 'Create an account', csrf },
        html`${notice('error', o.error)}${notice('info', o.info)}
          <section>
            ${form('/signup', csrf, 'Create account', fields)}
            <p class="links"><a href="/signin">I have an account</a></p>
          </section>`,
      ),
    );
  };

  router.get('/signup', html_, async (ctx) => {
    if (!(await signupOpen())) return send(ctx, 404, closedPage(ctx));
    await signupPage(ctx);
  });

  post('/signup', async (ctx) => {
    const body = ctx.request.body;
    const input = { name: str(body, 'name'), email: str(body, 'email'), password: str(body, 'password'), passwordConfirm: str(body, 'passwordConfirm') };
    try {
      await run(guestCaller(ctx), 'signup', input);
    } catch (err) {
      return signupPage(ctx, { ...refusal(err), name: input.name, email: input.email });
    }
    try {
      const tokens = tokensIn(await run(guestCaller(ctx), 'signin', { email: input.email, password: input.password }));
      if (tokens) storeTokens(ctx, names, tokens);
      return see(ctx, '/account?done=welcome');
    } catch (err) {
      // Created, but not signed in: --require-verified-email, most likely.
      return signinPage(ctx, { info: `Your account is created. ${message(err)}`, email: input.email });
    }
  });

  const closedPage = (ctx: Context) =>
    page(
      { title: 'Signup is closed', csrf: csrfToken(ctx, names) },
      html`<section>
        <p>New accounts are not open to everyone here. Ask the administrator for an account.</p>
        <p class="links"><a href="/signin">Sign in</a></p>
      </section>`,
    );

  // ---- Email verification ---------------------------------------------------------------------
  const verifyPage = (ctx: Context, o: { status?: number; error?: string; done?: boolean } = {}) => {
    const csrf = csrfToken(ctx, names);
    const body = o.done
      ? html`${notice('success', 'Your email address is confirmed. Thank you.')}
          <section>
            <p class="links"><a href="/account">Go to your account</a></p>
          </section>`
      : html`${notice('error', o.error)}
          <section data-with-token>
            <p>Confirm that this email address is yours.</p>
            ${form('/verify-email', csrf, 'Confirm my address', [
              field('token', 'Code from the email', { autocomplete: 'off', hint: 'The link in the email fills this in.' }),
            ])}
          </section>`;
    send(ctx, o.status ?? 200, page({ title: 'Confirm your email address', csrf, script: !o.done }, body));
  };
  router.get('/verify-email', html_, (ctx) => verifyPage(ctx));
  post('/verify-email', async (ctx) => {
    try {
      await run(guestCaller(ctx), 'verify_email', { token: str(ctx.request.body, 'token').trim() });
      verifyPage(ctx, { done: true });
    } catch (err) {
      verifyPage(ctx, refusal(err));
    }
  });

  // ---- Lifting the signin delay (the owner's mailed link) ------------------------------------
  const unlockPage = (ctx: Context, o: { status?: number; error?: string; done?: boolean } = {}) => {
    const csrf = csrfToken(ctx, names);
    const body = o.done
      ? html`${notice('success', 'Signin is unlocked for you. Sign in now.')}
          <section>
            <p class="links"><a href="/signin">Sign in</a></p>
          </section>`
      : html`${notice('error', o.error)}
          <section data-with-token>
            <p>Many signins to your account failed from other places. Lift the delay for yourself:</p>
            ${form('/unlock', csrf, 'Let me sign in', [field('token', 'Code from the email', { autocomplete: 'off', hint: 'The link in the email fills this in.' })])}
          </section>`;
    send(ctx, o.status ?? 200, page({ title: 'Sign in again', csrf, script: !o.done }, body));
  };
  router.get('/unlock', html_, (ctx) => unlockPage(ctx));
  post('/unlock', async (ctx) => {
    try {
      await run(guestCaller(ctx), 'unlock_signin', { token: str(ctx.request.body, 'token').trim() });
      unlockPage(ctx, { done: true });
    } catch (err) {
      unlockPage(ctx, refusal(err));
    }
  });

  // ---- Password reset ------------------------------------------------------------------------
  const resetPage = (ctx: Context, o: { status?: number; error?: string; info?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    const request = html`<section data-without-token>
      <h2>Get a link by email</h2>
      ${form('/reset-password/request', csrf, 'Send me a link', [field('email', 'Email', { type: 'email', autocomplete: 'username' })])}
    </section>`;
    const choose = html`<section data-with-token>
      <h2>Choose a new password</h2>
      ${form('/reset-password', csrf, 'Set the new password', [
        field('token', 'Code from the email', { autocomplete: 'off', hint: 'The link in the email fills this in.' }),
        field('password', 'New password', { type: 'password', autocomplete: 'new-password', hint: passwordHint }),
        field('passwordConfirm', 'New password again', { type: 'password', autocomplete: 'new-password' }),
      ])}
    </section>`;
    send(
      ctx,
      o.status ?? 200,
      page({ title: 'Reset your password', csrf, script: true }, html`${notice('error', o.error)}${notice('info', o.info)}${request}${choose}`),
    );
  };
  router.get('/reset-password', html_, (ctx) => resetPage(ctx));
  post('/reset-password/request', async (ctx) => {
    try {
      await run(guestCaller(ctx), 'reset_password_request', { email: str(ctx.request.body, 'email') });
      resetPage(ctx, { info: 'If an account uses that address, a link to reset its password is on its way. It works once, for a short time.' });
    } catch (err) {
      resetPage(ctx, refusal(err));
    }
  });
  post('/reset-password', async (ctx) => {
    const body = ctx.request.body;
    try {
      await run(guestCaller(ctx), 'reset_password', {
        token: str(body, 'token').trim(),
        password: str(body, 'password'),
        passwordConfirm: str(body, 'passwordConfirm'),
      });
      clearTokens(ctx, names);
      see(ctx, '/signin?done=reset');
    } catch (err) {
      resetPage(ctx, refusal(err));
    }
  });

  // ---- Account -------------------------------------------------------------------------------
  interface AccountState {
    status?: number;
    error?: string;
    info?: string;
    enrolment?: { secret: string; uri: string };
    recoveryCodes?: string[];
  }

  const accountPage = async (ctx: Context, caller: Caller, o: AccountState = {}) => {
    const csrf = csrfToken(ctx, names);
    const me = await core.records.me(caller);
    const a = me.view.attributes as { email: string; name: string; email_verified: boolean; totp_enabled: boolean };
    const sessions = (await run(caller, 'list_sessions', {})).find((i: Item) => i.ResponseType === 'sessions')!.Attributes.sessions as SessionView[];
    const profile = html`<section aria-labelledby="h-profile">
      <h2 id="h-profile">Profile</h2>
      <dl>
        <dt>Name</dt>
        <dd>${a.name}</dd>
        <dt>Email</dt>
        <dd>${a.email}</dd>
        <dt>Confirmed</dt>
        <dd>${a.email_verified ? 'yes' : 'not yet'}</dd>
        <dt>Administrator</dt>
        <dd>${me.meta.administrator ? 'yes' : 'no'}</dd>
      </dl>
      ${a.email_verified ? '' : form('/account/request-verification', csrf, 'Send a confirmation link', [], { secondary: true })}
    </section>`;
    const password = html`<section aria-labelledby="h-password">
      <h2 id="h-password">Password</h2>
      ${form('/account/password', csrf, 'Change password', [
        field('currentPassword', 'Current password', { type: 'password', autocomplete: 'current-password' }),
        field('password', 'New password', { type: 'password', autocomplete: 'new-password' }),
        field('passwordConfirm', 'New password again', { type: 'password', autocomplete: 'new-password' }),
      ])}
    </section>`;
    const email = html`<section aria-labelledby="h-email">
      <h2 id="h-email">Email address</h2>
      ${form('/account/email', csrf, 'Change email', [
        field('email', 'New email', { type: 'email', autocomplete: 'email' }),
        field('emailPassword', 'Password', { type: 'password', autocomplete: 'current-password' }),
      ])}
    </section>`;
    let totp: Html;
    if (o.recoveryCodes) {
      totp = html`<section aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        ${notice('success', 'Two-factor authentication is on.')}
        <p><strong>Your recovery codes</strong> (each works once if you lose your authenticator). They are shown only this time: store them somewhere safe.</p>
        <ol class="codes" id="recovery-codes">
          ${o.recoveryCodes.map((c) => html`<li>${c}</li>`)}
        </ol>
      </section>`;
    } else if (o.enrolment) {
      const { default: QRCode } = await import('qrcode');
      const svg = await QRCode.toString(o.enrolment.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
      totp = html`<section aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        <p>Scan this code with your authenticator app, or type the key in.</p>
        <figure class="qr" role="img" aria-label="QR code of the authenticator key">${raw(svg)}</figure>
        <p>Key: <span class="secret" id="totp-secret">${o.enrolment.secret}</span></p>
        ${form('/account/totp/confirm', csrf, 'Turn on', [field('otp', 'Code from the app', { inputmode: 'numeric', autocomplete: 'one-time-code', autofocus: true })])}
      </section>`;
    } else if (a.totp_enabled) {
      totp = html`<section aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        <p>On: signing in asks for a code from your app.</p>
        ${form(
          '/account/totp/disable',
          csrf,
          'Turn off',
          [
            field('totpPassword', 'Password', { type: 'password', autocomplete: 'current-password' }),
            field('otp', 'Code from the app (or a recovery code)', { autocomplete: 'one-time-code' }),
          ],
          { secondary: true },
        )}
      </section>`;
    } else {
      totp = html`<section aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        <p>Off. With it on, signing in also asks for a code from an authenticator app.</p>
        ${form('/account/totp/enroll', csrf, 'Set up', [field('totpPassword', 'Password', { type: 'password', autocomplete: 'current-password' })])}
      </section>`;
    }
    sessions.sort((x, y) => Number(y.current) - Number(x.current));
    const sessionList = html`<section aria-labelledby="h-sessions">
      <h2 id="h-sessions">Sessions</h2>
      <ul class="sessions">
        ${sessions.map(
          (x) =>
            html`<li>
              <div>
                <div>${x.current ? 'This browser' : (x.user_agent ?? 'Unknown device').slice(0, 80)}</div>
                <div class="meta">from ${x.client ?? 'unknown'} &middot; last used ${x.last_used_at.replace('T', ' ').slice(0, 16)} UTC</div>
              </div>
              ${
                x.current
                  ? ''
                  : html`<form method="post" action="/account/sessions/revoke">
                      <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="session_id" value="${x.id}" /><button
                        type="submit"
                        class="secondary"
                        aria-label="Sign out the session from ${x.client ?? 'unknown'}"
                      >
                        Sign out
                      </button>
                    </form>`
              }
            </li>`,
        )}
      </ul>
      <p class="links">${form('/account/signout-everywhere', csrf, 'Sign out everywhere', [], { secondary: true })}</p>
    </section>`;
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: 'Your account', signedIn: true, csrf },
        html`${notice('error', o.error)}${notice('success', o.info)}${profile}${totp}${password}${email}${sessionList}`,
      ),
    );
  };

  router.get('/account', html_, async (ctx) => {
    const caller = await pageCaller(ctx, core, names);
    if (!caller) return see(ctx, '/signin');
    await accountPage(ctx, caller, { info: DONE[String(ctx.query.done)] });
  });

  /** An account form: signed in, or off to the sign-in page; errors show on the account page. */
  const accountPost = (path: string, handler: (ctx: Context, caller: Caller, body: unknown) => Promise<AccountState | string>) =>
    post(path, async (ctx) => {
      const caller = await pageCaller(ctx, core, names);
      if (!caller) return see(ctx, '/signin');
      let outcome: AccountState | string;
      try {
        outcome = await handler(ctx, caller, ctx.request.body);
      } catch (err) {
        return accountPage(ctx, caller, refusal(err));
      }
      if (typeof outcome === 'string') return see(ctx, outcome);
      // A handler that opened a new session (keep) reads the page with its token.
      await accountPage(ctx, (ctx.state.renewed as Caller | undefined) ?? caller, outcome);
    });

  /** Actions that answer a new session (password, email, TOTP): keep this browser signed in. */
  const keep = (ctx: Context, items: Item[]) => {
    const tokens = tokensIn(items);
    if (!tokens) return;
    storeTokens(ctx, names, tokens);
    ctx.state.renewed = tokenCaller(ctx, tokens.token);
  };

  accountPost('/account/request-verification', async (_ctx, caller) => {
    await run(caller, 'request_verification', {});
    return '/account?done=verification';
  });
  accountPost('/account/password', async (ctx, caller, body) => {
    keep(
      ctx,
      await run(caller, 'change_password', {
        currentPassword: str(body, 'currentPassword'),
        password: str(body, 'password'),
        passwordConfirm: str(body, 'passwordConfirm'),
      }),
    );
    return '/account?done=password';
  });
  accountPost('/account/email', async (ctx, caller, body) => {
    keep(ctx, await run(caller, 'change_email', { email: str(body, 'email'), password: str(body, 'emailPassword') }));
    return '/account?done=email';
  });
  accountPost('/account/totp/enroll', async (_ctx, caller, body) => {
    const items = await run(caller, 'totp_enroll', { password: str(body, 'totpPassword') });
    const secret = items.find((i: Item) => i.ResponseType === 'totp.secret')!.Attributes as { secret: string; uri: string };
    return { enrolment: { secret: secret.secret, uri: secret.uri } };
  });
  accountPost('/account/totp/confirm', async (ctx, caller, body) => {
    let items: Item[];
    try {
      items = await run(caller, 'totp_confirm', { otp: str(body, 'otp').trim() });
    } catch (err) {
      // A mistyped code keeps the enrolment in progress: the same QR code and key, not a new secret.
      const pending = await core.accounts.pendingTotp(caller);
      return { ...refusal(err), ...(pending ? { enrolment: pending } : {}) };
    }
    keep(ctx, items);
    return { recoveryCodes: items.find((i: Item) => i.ResponseType === 'totp.recovery_codes')!.Attributes.codes as string[] };
  });
  accountPost('/account/totp/disable', async (ctx, caller, body) => {
    const code = str(body, 'otp').trim();
    const second = /^\d{6}$/.test(code) ? { otp: code } : { recovery_code: code };
    keep(ctx, await run(caller, 'totp_disable', { password: str(body, 'totpPassword'), ...second }));
    return '/account?done=totp_off';
  });
  accountPost('/account/sessions/revoke', async (_ctx, caller, body) => {
    await run(caller, 'revoke_session', { session_id: str(body, 'session_id') });
    return '/account?done=revoked';
  });
  accountPost('/account/signout-everywhere', async (ctx, caller) => {
    await run(caller, 'signout_everywhere', {});
    clearTokens(ctx, names);
    return '/signin?done=everywhere';
  });
  post('/signout', async (ctx) => {
    const caller = await pageCaller(ctx, core, names);
    if (caller) await run(caller, 'signout', {}).catch((err: unknown) => void message(err));
    clearTokens(ctx, names);
    see(ctx, '/signin?done=signed_out');
  });

  if (oidc) registerInteractions(router, core, oidc, { names, post, send, see, signinPage, html_ });
  return router;
}

interface InteractionTools {
  names: ReturnType<typeof cookieNames>;
  post: (path: string, handler: (ctx: Context) => Promise<void>) => unknown;
  send: typeof send;
  see: typeof see;
  signinPage: (ctx: Context, o: { info?: string; returnTo?: string }) => Promise<void>;
  html_: ReturnType<typeof errorStyle>;
}

const SCOPE_TEXT: Record<string, string> = {
  openid: 'know who you are on this server (a stable id)',
  email: 'see your email address and whether it is confirmed',
  profile: 'see your name',
  groups: 'see the names of your groups',
  offline_access: 'stay signed in when you are away (a refresh token)',
};

/**
 * The OpenID Connect provider's login and consent steps on Gatehouse's pages. Login is the
 * page session (signed in through the signin action, with every rule); the client's allowed
 * groups are checked here; consent is asked once per client and scope set, never for
 * first-party clients.
 */
function registerInteractions(router: Router, core: Core, oidc: OidcProvider, t: InteractionTools): void {
  type Details = Awaited<ReturnType<Awaited<ReturnType<OidcProvider['provider']>>['interactionDetails']>>;
  const finish = async (ctx: Context, result: Record<string, unknown>) => {
    const provider = await oidc.provider();
    t.see(ctx, await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
  };
  const denied = (ctx: Context) => finish(ctx, { error: 'access_denied', error_description: 'this account may not sign in to this application' });

  const grantAll = async (details: Details) => {
    const provider = await oidc.provider();
    const { prompt, params, session } = details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
    const missing = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant!.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant!.addResourceScope(indicator, scopes.join(' '));
    return grant!.save();
  };

  /** The sign-in in progress (its cookie), or a clear 400: the provider's errors are not ours to leak. */
  const detailsOf = async (ctx: Context): Promise<Details> => {
    const provider = await oidc.provider();
    try {
      return await provider.interactionDetails(ctx.req, ctx.res);
    } catch {
      throw new AppError('invalid_input', 'this sign-in has expired or belongs to another browser; start again from the application');
    }
  };

  router.get('/oidc/interaction/:uid', t.html_, async (ctx) => {
    const details = await detailsOf(ctx);
    const clientId = String(details.params.client_id);
    if (details.prompt.name === 'login') {
      const caller = await pageCaller(ctx, core, t.names);
      const session = caller && (await core.oidc.pageSession(caller));
      // prompt=login wants a sign-in made after this request began; max_age one at most that old.
      // An older page session does not answer them: the person signs in again (password, TOTP).
      const reasons = details.prompt.reasons;
      const maxAge = Number(details.params.max_age);
      const notBefore = Math.max(
        reasons.includes('login_prompt') ? Number(details.iat) : 0,
        reasons.includes('max_age') && Number.isFinite(maxAge) ? Math.floor(core.clock.now() / 1000) - maxAge : 0,
      );
      if (!session || session.authTime < notBefore) {
        const policy = await core.oidc.clientPolicy(clientId, null);
        const again = session !== null;
        return t.signinPage(ctx, {
          info: again ? `Sign in again to continue to ${policy.name}.` : `Sign in to continue to ${policy.name}.`,
          returnTo: `/oidc/interaction/${details.uid}`,
        });
      }
      if (!(await core.oidc.clientPolicy(clientId, session.sub)).allowed) return denied(ctx);
      // The real time of the sign-in, for auth_time and later max_age checks (not "now").
      return finish(ctx, { login: { accountId: session.sub, ts: session.authTime } });
    }
    const policy = await core.oidc.clientPolicy(clientId, details.session?.accountId ?? null);
    if (!policy.allowed) return denied(ctx);
    if (policy.firstParty) return finish(ctx, { consent: { grantId: await grantAll(details) } });
    const csrf = csrfToken(ctx, t.names);
    const scopes = String(details.params.scope ?? 'openid')
      .split(' ')
      .filter((x) => x in SCOPE_TEXT);
    t.send(
      ctx,
      200,
      page(
        { title: `Allow ${policy.name}?`, csrf, signedIn: true },
        html`<section>
          <p><strong>${policy.name}</strong> asks to:</p>
          <ul>
            ${scopes.map((x) => html`<li>${SCOPE_TEXT[x]}</li>`)}
          </ul>
          <div class="links">
            ${form(`/oidc/interaction/${details.uid}/consent`, csrf, 'Allow', [])}${form(`/oidc/interaction/${details.uid}/deny`, csrf, 'Deny', [], { secondary: true })}
          </div>
        </section>`,
      ),
    );
  });

  t.post('/oidc/interaction/:uid/consent', async (ctx) => {
    const details = await detailsOf(ctx);
    if (details.prompt.name !== 'consent') return finish(ctx, {});
    if (!(await core.oidc.clientPolicy(String(details.params.client_id), details.session?.accountId ?? null)).allowed) return denied(ctx);
    await finish(ctx, { consent: { grantId: await grantAll(details) } });
  });
  t.post('/oidc/interaction/:uid/deny', async (ctx) => {
    await detailsOf(ctx);
    await finish(ctx, { error: 'access_denied', error_description: 'the account holder did not allow it' });
  });
}
