/**
 * The signup page, while guest signup is open; a clear page while it is closed. An invitation's
 * link (/signup?invite=…) opens it for the invited address alone, open or closed.
 */
import type { Context } from 'koa';
import { t } from './look';
import { isAppError } from '../../errors';
import { field, form, html, notice, page, tm } from './html';
import { type KnownRefusals, type PageKit, refusal, see, send, str, message, type SigninPage } from './kit';
import { csrfToken, guestCaller, storeTokens, tokensIn } from './session';
import { ceremonyForm } from './passkey-forms';
import { providerButtons } from './provider-forms';

/** The signup form, shown again with a refusal. */
export type SignupPage = (
  ctx: Context,
  o?: { status?: number; error?: string; info?: string; name?: string; email?: string; username?: string; invite?: { token: string; email: string } },
) => Promise<void>;

/** The signup form's own refusals, in the reader's language (a guest is never told which account has an address). */
const SIGNUP_REFUSALS: KnownRefusals = { email_taken: 'pages.refused.email_taken' };

export function registerSignup(kit: PageKit, signinPage: SigninPage): SignupPage {
  const { core, router, names, run, html_, post, passwordHint } = kit;
  const signupOpen = async () => (await core.signupStatus()).open;
  // ---- Sign up -------------------------------------------------------------------------------
  const signupPage: SignupPage = async (ctx, o = {}) => {
    const csrf = csrfToken(ctx, names);
    const invite = o.invite;
    const fields = [
      // An invitation fixes the address: shown, not asked (the server reads it from the invitation).
      invite
        ? html`<input type="hidden" name="invite" value="${invite.token}" data-passkey-option="invite" />
            <p>${tm('signup.invited', { email: html`<strong id="invited-email">${invite.email}</strong>` })}</p>`
        : html``,
      field('name', t('signup.name'), { autocomplete: 'name', value: o.name, autofocus: true, maxlength: 100, passkeyOption: true }),
      invite ? html`` : field('email', t('signup.email'), { type: 'email', autocomplete: 'email', value: o.email, passkeyOption: true }),
      // Optional: apps that sign in over LDAP ask for it; made from the email when left empty.
      invite
        ? html``
        : field('username', t('signup.username'), {
            autocomplete: 'username',
            value: o.username,
            required: false,
            maxlength: 128,
            hint: t('signup.username_hint'),
          }),
      field('password', t('signup.password'), { type: 'password', autocomplete: 'new-password', hint: passwordHint() }),
      field('passwordConfirm', t('signup.password_confirm'), { type: 'password', autocomplete: 'new-password' }),
    ];
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: t('signup.title'), csrf, passkeys: true },
        html`${notice('error', o.error)}${notice('info', o.info)}
          <section>
            ${form('/signup', csrf, t('signup.submit'), fields)}
            ${ceremonyForm('signup', '/signup/passkey', csrf, t('signup.passkey'), [
              html`<p class="meta or">${invite ? t('signup.or_passkey_invited') : t('signup.or_passkey')}</p>`,
              invite ? html`<input type="hidden" name="invite" value="${invite.token}" />` : html``,
            ])}
            ${providerButtons(csrf, await core.providers.buttons(), { invite: invite?.token })}
            <p class="links"><a href="/signin">${t('signup.have_account')}</a></p>
          </section>`,
      ),
    );
  };

  /** A page saying why an invitation link cannot be used (used, revoked, expired, mistyped). */
  const invitationRefused = (ctx: Context, err: unknown) => {
    const r = refusal(err);
    send(
      ctx,
      r.status === 400 ? 410 : r.status,
      page(
        { title: t('signup.bad_invite.title'), csrf: csrfToken(ctx, names) },
        html`${notice('error', r.error)}
          <section>
            <p>${t('signup.bad_invite.text')}</p>
            <p class="links"><a href="/signin">${t('layout.signin')}</a></p>
          </section>`,
      ),
    );
  };

  router.get('/signup', html_, async (ctx) => {
    const token = typeof ctx.query.invite === 'string' ? ctx.query.invite : undefined;
    if (token !== undefined) {
      let invited: { email: string };
      try {
        invited = await core.invitations.describe(token);
      } catch (err) {
        return invitationRefused(ctx, err);
      }
      return signupPage(ctx, { invite: { token, email: invited.email } });
    }
    if (!(await signupOpen())) return send(ctx, 404, closedPage(ctx));
    await signupPage(ctx);
  });

  post('/signup', async (ctx) => {
    const body = ctx.request.body;
    const token = str(body, 'invite');
    if (token) {
      let email: string;
      try {
        ({ email } = await core.invitations.accept(guestCaller(ctx), token, {
          name: str(body, 'name'),
          password: str(body, 'password'),
          passwordConfirm: str(body, 'passwordConfirm'),
        }));
      } catch (err) {
        // A store outage is a 503, never "the invitation was refused".
        if (isAppError(err) && err.code === 'unavailable') throw err;
        const invited = await core.invitations.describe(token).catch((e: unknown) => {
          if (isAppError(e) && e.code !== 'unavailable') return null;
          throw e;
        });
        if (!invited) return invitationRefused(ctx, err);
        return signupPage(ctx, { ...refusal(err), name: str(body, 'name'), invite: { token, email: invited.email } });
      }
      return signInAfter(ctx, email, str(body, 'password'));
    }
    const input = { name: str(body, 'name'), email: str(body, 'email'), password: str(body, 'password'), passwordConfirm: str(body, 'passwordConfirm') };
    const username = str(body, 'username').trim();
    try {
      await run(guestCaller(ctx), 'signup', username ? { ...input, username } : input);
    } catch (err) {
      return signupPage(ctx, { ...refusal(err, undefined, SIGNUP_REFUSALS), name: input.name, email: input.email, username });
    }
    return signInAfter(ctx, input.email, input.password);
  });

  const signInAfter = async (ctx: Context, email: string, password: string) => {
    try {
      const tokens = tokensIn(await run(guestCaller(ctx), 'signin', { email, password }));
      if (tokens) storeTokens(ctx, names, tokens);
      return see(ctx, '/account?done=welcome');
    } catch (err) {
      // Created, but not signed in: --require-verified-email, most likely.
      return signinPage(ctx, { info: t('signup.created', { message: message(err) }), email });
    }
  };

  const closedPage = (ctx: Context) =>
    page(
      { title: t('signup.closed.title'), csrf: csrfToken(ctx, names) },
      html`<section>
        <p>${t('signup.closed.text')}</p>
        <p class="links"><a href="/signin">${t('layout.signin')}</a></p>
      </section>`,
    );
  return signupPage;
}
