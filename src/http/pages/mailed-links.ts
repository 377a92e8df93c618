/** The pages the mailed links open: confirm an email address, lift the signin delay, end a session, reset a password. */
import type { Context } from 'koa';
import { field, form, html, notice, page } from './html';
import type { MessageKey } from '../../core';
import { type KnownRefusals, type PageKit, refusal, see, send, str } from './kit';
import { t } from './look';
import { clearTokens, csrfToken, endPrevious, guestCaller, pageCaller, storeTokens } from './session';

/** The pages of mailed links, each with its words in the catalogues (pages.<words>.title, .intro, …). */
type LinkWords = 'verify' | 'unlock' | 'end_session';

/** A link that was used or expired, said by the page that opened it (the core names the link in English). */
const linkRefused = (words: LinkWords | 'reset' | 'recover'): KnownRefusals => ({
  token_invalid: `pages.${words}.invalid`,
  token_expired: `pages.${words}.expired`,
});

/** The field the mailed link's fragment fills in (the page's script moves it there). */
const tokenField = () => field('token', t('pages.link.field'), { autocomplete: 'off', hint: t('pages.link.hint') });

export function registerMailedLinks(kit: PageKit) {
  const { router, names, run, html_, post, passwordHint, core } = kit;

  // ---- A recovery link an administrator made: 15 minutes on the account page to add a passkey or a password.
  const recoverPage = (ctx: Context, o: { status?: number; error?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: t('pages.recover.title'), csrf, script: true },
        html`${notice('error', o.error)}
          <section data-with-token>
            <p>${t('pages.recover.intro')}</p>
            ${form('/recover', csrf, t('pages.recover.submit'), [field('token', t('pages.recover.field'), { autocomplete: 'off', hint: t('pages.recover.hint') })])}
          </section>`,
      ),
    );
  };
  router.get('/recover', html_, (ctx) => recoverPage(ctx));
  post('/recover', async (ctx) => {
    try {
      const previous = await pageCaller(ctx, core, names);
      const tokens = await core.accounts.openRecovery(guestCaller(ctx), str(ctx.request.body, 'token').trim());
      storeTokens(ctx, names, { token: tokens.token, refresh: tokens.refreshToken });
      // One browser, one page session: the one the cookie held ends, as at every sign-in.
      await endPrevious(core, previous);
      see(ctx, '/account?done=recovery');
    } catch (err) {
      recoverPage(ctx, refusal(err, undefined, linkRefused('recover')));
    }
  });
  /**
   * A page whose mailed link carries a one-time token (in the fragment, moved into the form by the
   * page's script): one button runs the action, then a fixed success message.
   */
  const tokenLink = (o: { path: string; action: string; words: LinkWords; next: { href: string; text: MessageKey } }) => {
    const show = (ctx: Context, state: { status?: number; error?: string; done?: boolean } = {}) => {
      const csrf = csrfToken(ctx, names);
      const body = state.done
        ? html`${notice('success', t(`pages.${o.words}.done`))}
            <section>
              <p class="links"><a href="${o.next.href}">${t(o.next.text)}</a></p>
            </section>`
        : html`${notice('error', state.error)}
            <section data-with-token>
              <p>${t(`pages.${o.words}.intro`)}</p>
              ${form(o.path, csrf, t(`pages.${o.words}.submit`), [tokenField()])}
            </section>`;
      send(ctx, state.status ?? 200, page({ title: t(`pages.${o.words}.title`), csrf, script: !state.done }, body));
    };
    router.get(o.path, html_, (ctx) => show(ctx));
    post(o.path, async (ctx) => {
      try {
        await run(guestCaller(ctx), o.action, { token: str(ctx.request.body, 'token').trim() });
        show(ctx, { done: true });
      } catch (err) {
        show(ctx, refusal(err, undefined, linkRefused(o.words)));
      }
    });
  };

  tokenLink({
    path: '/verify-email',
    action: 'verify_email',
    words: 'verify',
    next: { href: '/account', text: 'pages.verify.next' },
  });
  // The owner's link past the growing signin delay.
  tokenLink({
    path: '/unlock',
    action: 'unlock_signin',
    words: 'unlock',
    next: { href: '/signin', text: 'layout.signin' },
  });

  // The new-sign-in mail's link: ends that one session (nothing else; no sign-in needed).
  tokenLink({
    path: '/end-session',
    action: 'end_session',
    words: 'end_session',
    next: { href: '/account#sessions', text: 'pages.end_session.next' },
  });

  // ---- Password reset ------------------------------------------------------------------------
  const resetPage = (ctx: Context, o: { status?: number; error?: string; info?: string } = {}) => {
    const csrf = csrfToken(ctx, names);
    const request = html`<section data-without-token>
      <h2>${t('pages.reset.request.title')}</h2>
      ${form('/reset-password/request', csrf, t('pages.reset.request.submit'), [field('email', t('signin.email'), { type: 'email', autocomplete: 'username' })])}
    </section>`;
    const choose = html`<section data-with-token>
      <h2>${t('pages.reset.choose.title')}</h2>
      ${form('/reset-password', csrf, t('pages.reset.choose.submit'), [
        tokenField(),
        field('password', t('pages.reset.password'), { type: 'password', autocomplete: 'new-password', hint: passwordHint() }),
        field('passwordConfirm', t('pages.reset.password_again'), { type: 'password', autocomplete: 'new-password' }),
      ])}
    </section>`;
    send(
      ctx,
      o.status ?? 200,
      page({ title: t('pages.reset.title'), csrf, script: true }, html`${notice('error', o.error)}${notice('info', o.info)}${request}${choose}`),
    );
  };
  router.get('/reset-password', html_, (ctx) => resetPage(ctx));
  post('/reset-password/request', async (ctx) => {
    try {
      await run(guestCaller(ctx), 'reset_password_request', { email: str(ctx.request.body, 'email') });
      resetPage(ctx, { info: t('pages.reset.sent') });
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
      resetPage(ctx, refusal(err, undefined, linkRefused('reset')));
    }
  });
}
