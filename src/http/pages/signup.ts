/** The signup page, while guest signup is open; a clear page while it is closed. */
import type { Context } from 'koa';
import { field, form, html, notice, page } from './html';
import { type PageKit, refusal, see, send, str, message, type SigninPage } from './kit';
import { csrfToken, guestCaller, storeTokens, tokensIn } from './session';
import { ceremonyForm } from './passkey-forms';

/** The signup form, shown again with a refusal. */
export type SignupPage = (ctx: Context, o?: { status?: number; error?: string; info?: string; name?: string; email?: string }) => Promise<void>;

export function registerSignup(kit: PageKit, signinPage: SigninPage): SignupPage {
  const { core, router, names, run, html_, post, passwordHint } = kit;
  const signupOpen = async () => (await core.signupStatus()).open;
  // ---- Sign up -------------------------------------------------------------------------------
  const signupPage: SignupPage = async (ctx, o = {}) => {
    const csrf = csrfToken(ctx, names);
    const fields = [
      field('name', 'Name', { autocomplete: 'name', value: o.name, autofocus: true, maxlength: 100, passkeyOption: true }),
      field('email', 'Email', { type: 'email', autocomplete: 'email', value: o.email, passkeyOption: true }),
      field('password', 'Password', { type: 'password', autocomplete: 'new-password', hint: passwordHint }),
      field('passwordConfirm', 'Password again', { type: 'password', autocomplete: 'new-password' }),
    ];
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: 'Create an account', csrf, passkeys: true },
        html`${notice('error', o.error)}${notice('info', o.info)}
          <section>
            ${form('/signup', csrf, 'Create account', fields)}
            ${ceremonyForm('signup', '/signup/passkey', csrf, 'Create it with a passkey instead', [
              html`<p class="meta or">Or skip the password: your name and email above, and a passkey on this device.</p>`,
            ])}
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
  return signupPage;
}
