/** The pages the mailed links open: confirm an email address, lift the signin delay, end a session, reset a password. */
import type { Context } from 'koa';
import { field, form, html, notice, page } from './html';
import { type PageKit, refusal, see, send, str } from './kit';
import { clearTokens, csrfToken, guestCaller, storeTokens } from './session';

export function registerMailedLinks(kit: PageKit) {
  const { router, names, run, html_, post, passwordHint, core } = kit;

  // ---- A recovery link an administrator made: 15 minutes on the account page to add a passkey or a password.
  const recoverPage = (ctx: Context, o: { status?: number; error?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: 'Recover your account', csrf, script: true },
        html`${notice('error', o.error)}
          <section data-with-token>
            <p>An administrator made this link for you. It opens your account page for 15 minutes, to add a new passkey or a password. It works once.</p>
            ${form('/recover', csrf, 'Open my account', [field('token', 'Code from the link', { autocomplete: 'off', hint: 'The link fills this in.' })])}
          </section>`,
      ),
    );
  };
  router.get('/recover', html_, (ctx) => recoverPage(ctx));
  post('/recover', async (ctx) => {
    try {
      const tokens = await core.accounts.openRecovery(guestCaller(ctx), str(ctx.request.body, 'token').trim());
      storeTokens(ctx, names, { token: tokens.token, refresh: tokens.refreshToken });
      see(ctx, '/account?done=recovery');
    } catch (err) {
      recoverPage(ctx, refusal(err));
    }
  });
  /**
   * A page whose mailed link carries a one-time token (in the fragment, moved into the form by the
   * page's script): one button runs the action, then a fixed success message.
   */
  const tokenLink = (o: { path: string; action: string; title: string; intro: string; button: string; done: string; next: { href: string; text: string } }) => {
    const show = (ctx: Context, state: { status?: number; error?: string; done?: boolean } = {}) => {
      const csrf = csrfToken(ctx, names);
      const body = state.done
        ? html`${notice('success', o.done)}
            <section>
              <p class="links"><a href="${o.next.href}">${o.next.text}</a></p>
            </section>`
        : html`${notice('error', state.error)}
            <section data-with-token>
              <p>${o.intro}</p>
              ${form(o.path, csrf, o.button, [field('token', 'Code from the email', { autocomplete: 'off', hint: 'The link in the email fills this in.' })])}
            </section>`;
      send(ctx, state.status ?? 200, page({ title: o.title, csrf, script: !state.done }, body));
    };
    router.get(o.path, html_, (ctx) => show(ctx));
    post(o.path, async (ctx) => {
      try {
        await run(guestCaller(ctx), o.action, { token: str(ctx.request.body, 'token').trim() });
        show(ctx, { done: true });
      } catch (err) {
        show(ctx, refusal(err));
      }
    });
  };

  tokenLink({
    path: '/verify-email',
    action: 'verify_email',
    title: 'Confirm your email address',
    intro: 'Confirm that this email address is yours.',
    button: 'Confirm my address',
    done: 'Your email address is confirmed. Thank you.',
    next: { href: '/account', text: 'Go to your account' },
  });
  // The owner's link past the growing signin delay.
  tokenLink({
    path: '/unlock',
    action: 'unlock_signin',
    title: 'Sign in again',
    intro: 'Many signins to your account failed from other places. Lift the delay for yourself:',
    button: 'Let me sign in',
    done: 'Signin is unlocked for you. Sign in now.',
    next: { href: '/signin', text: 'Sign in' },
  });

  // The new-sign-in mail's link: ends that one session (nothing else; no sign-in needed).
  tokenLink({
    path: '/end-session',
    action: 'end_session',
    title: 'End a session',
    intro: 'Your account was signed in to from a new browser or place. If it was not you, end that session:',
    button: 'End that session',
    done: 'That session is signed out. Change your password now if someone else knows it.',
    next: { href: '/account#sessions', text: 'Your sessions' },
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
        field('password', 'New password', { type: 'password', autocomplete: 'new-password', hint: passwordHint() }),
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
}
