/**
 * Sign in with another provider on the pages: "Continue with …" buttons (a form post, so no other
 * site can start a flow in this browser), the callback, the TOTP step for accounts that have it,
 * and linking and unlinking on the account page. The flow cookie binds a flow to the browser
 * that began it; the core keeps only its hash.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { safeReturn, type Caller } from '../../core';
import { isAppError } from '../../errors';
import { html, notice, page } from './html';
import { type KnownRefusals, type PageKit, refusal, see, send, str } from './kit';
import { t } from './look';
import { csrfToken, endPrevious, guestCaller, pageCaller, readCookie, setPageCookie, storeTokens } from './session';
import { INTERACTION_PATH } from '../oidc';
import type { AccountPages } from './account';
import { confirmAddress, needsConfirming } from './confirm-return';
import { codeStepPage } from './code-step';

const FLOW_COOKIE_S = 15 * 60;

/**
 * The refusals of a sign-in with another provider a person can act on, in the page's words; any
 * other (an organization's rule, a missing address) in the core's, which name what it checked.
 */
const REFUSED: KnownRefusals = {
  token_invalid: 'pages.provider.expired',
  invalid_credentials: 'pages.provider.refused',
  linked_elsewhere: 'pages.provider.linked_elsewhere',
  email_not_trusted: 'pages.provider.email_not_trusted',
  signup_closed: 'pages.provider.no_account',
};
const RANDOM = /^[A-Za-z0-9_-]{43}$/;

export function registerProviders(kit: PageKit, account: AccountPages): void {
  const { core, router, names, html_, post } = kit;
  const cookieName = names.secure ? '__Host-gatehouse_flow' : 'gatehouse_flow';
  /** This browser's flow cookie, made on first use. */
  const binding = (ctx: Context): string => {
    const existing = readCookie(ctx, cookieName);
    if (existing && RANDOM.test(existing)) return existing;
    const made = randomBytes(32).toString('base64url');
    setPageCookie(ctx, names, cookieName, made, FLOW_COOKIE_S);
    return made;
  };
  /** A refusal of a sign-in with another provider: the ones a person can act on in the page's words, naming the provider. */
  const refusedPage = async (ctx: Context, err: unknown, providerName?: string) => {
    const provider = providerName ? (await core.providers.buttons()).find((b) => b.name === providerName)?.display_name : undefined;
    const r = refusal(err, undefined, REFUSED, { provider: provider ?? t('pages.provider.the_provider') });
    send(
      ctx,
      r.status,
      page(
        { title: t('pages.provider.refused.title'), csrf: csrfToken(ctx, names) },
        html`${notice('error', r.error)}
          <section>
            <p class="links"><a href="/signin">${t('pages.provider.back')}</a></p>
          </section>`,
      ),
    );
  };
  const after = (carry: { returnTo?: string; rd?: string }) =>
    (carry.returnTo && INTERACTION_PATH.test(carry.returnTo) ? carry.returnTo : undefined) ??
    safeReturn(carry.rd, core.config.publicUrl, core.config.cookieDomain) ??
    '/account';

  post('/signin/provider/:name', async (ctx) => {
    const body = ctx.request.body;
    const returnTo = INTERACTION_PATH.test(str(body, 'return_to')) ? str(body, 'return_to') : undefined;
    const rd = safeReturn(str(body, 'rd'), core.config.publicUrl, core.config.cookieDomain) ?? undefined;
    try {
      const url = await core.providers.begin(guestCaller(ctx), ctx.params.name, {
        purpose: 'signin',
        binding: binding(ctx),
        carry: { returnTo, rd },
        inviteToken: str(body, 'invite') || undefined,
      });
      see(ctx, url);
    } catch (err) {
      await refusedPage(ctx, err, ctx.params.name);
    }
  });

  /** The account's own TOTP step after the provider's sign-in: the sign-in page's code step. */
  const secondFactorPage = (ctx: Context, pending: string, o: { status?: number; error?: string } = {}) =>
    codeStepPage(ctx, { action: '/signin/provider-code', carried: { pending }, csrf: csrfToken(ctx, names), ...o });

  router.get('/signin/provider/:name/callback', html_, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    // The address the provider sent the browser to, as registered there (the public URL's, not the Host header's).
    const url = new URL(`${core.config.publicUrl}${ctx.originalUrl}`);
    try {
      const previous = await pageCaller(ctx, core, names);
      const caller: Caller = previous ?? guestCaller(ctx);
      const done = await core.providers.finish(caller, ctx.params.name, url, readCookie(ctx, cookieName) ?? null);
      if (done.kind === 'linked') return see(ctx, '/account?done=linked');
      if (done.kind === 'second_factor') return secondFactorPage(ctx, done.pending);
      storeTokens(ctx, names, { token: done.session.token, refresh: done.session.refreshToken });
      await endPrevious(core, previous);
      see(ctx, after(done.carry));
    } catch (err) {
      if (!isAppError(err)) throw err;
      // A link whose session is no longer recent when the provider answers: confirm it is you, then link again.
      if (needsConfirming(err)) return see(ctx, confirmAddress('/account'));
      await refusedPage(ctx, err, ctx.params.name);
    }
  });

  post('/signin/provider-code', async (ctx) => {
    const pending = str(ctx.request.body, 'pending');
    try {
      const done = await core.providers.secondFactor(guestCaller(ctx), pending, readCookie(ctx, cookieName) ?? null, str(ctx.request.body, 'otp').trim());
      storeTokens(ctx, names, { token: done.session.token, refresh: done.session.refreshToken });
      see(ctx, after(done.carry));
    } catch (err) {
      if (isAppError(err) && (err.code === 'otp_invalid' || err.code === 'otp_required')) return secondFactorPage(ctx, pending, refusal(err));
      await refusedPage(ctx, err);
    }
  });

  // ---- The account page: link, unlink ---------------------------------------------------------
  account.post('/account/providers/link', async (ctx, caller, body) => {
    return core.providers.begin(caller, str(body, 'provider'), { purpose: 'link', binding: binding(ctx), carry: {} });
  });
  account.post('/account/providers/unlink', async (_ctx, caller, body) => {
    await core.providers.unlink(caller, str(body, 'id'));
    return '/account?done=unlinked';
  });
}
