/**
 * The SAML identity provider's browser side. /saml/sso takes an AuthnRequest (HTTP-Redirect or
 * HTTP-POST) and carries it, by a handle, to a same-site page: a cookie marked SameSite=Lax is
 * not sent with a cross-site POST, so the person's session is read only after that hop. There,
 * someone signed in gets a form the page posts to the SP's registered ACS URL; anyone else signs
 * in on the sign-in page first. /saml/slo ends the session for an SP's LogoutRequest that names
 * this session's sign-in there (otherwise the SP is told no, and the session stays). Every
 * refusal is a page that says why, and nothing is sent to the SP.
 */
import type { Context } from 'koa';
import type { BoundMessage, BrowserStep } from '../../core';
import { lazyKoaBody } from '../body';
import { html, notice, page } from './html';
import { type KnownRefusals, message, type PageKit, see, send, type SigninPage, str } from './kit';
import { look, t } from './look';
import { STATUS } from '../errors';
import { isAppError } from '../../errors';
import { clearTokens, csrfToken, guestCaller, pageCaller } from './session';
import { confirmAddress } from './confirm-return';
import { secondFactorNeeded } from './second-factor-needed';

/** The query's own spelling of the signed fields (HTTP-Redirect signs them as sent, SAML bindings 3.4.4.1). */
function signedQuery(raw: string, param: 'SAMLRequest' | 'SAMLResponse'): string | undefined {
  const parts = new Map(raw.split('&').map((p) => [p.slice(0, p.indexOf('=') < 0 ? p.length : p.indexOf('=')), p] as const));
  const fields = [param, 'RelayState', 'SigAlg'].map((k) => parts.get(k)).filter((p): p is string => p !== undefined);
  return fields.length > 0 ? fields.join('&') : undefined;
}

/** Refusals said in the page's words; the others (an app's group gate names the app) in the core's. */
const REFUSED: KnownRefusals = { account_disabled: 'pages.saml.account_disabled' };

const one = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function fromQuery(ctx: Context): BoundMessage {
  const q = ctx.query;
  return {
    binding: 'redirect',
    message: one(q.SAMLRequest) ?? '',
    relayState: one(q.RelayState),
    sigAlg: one(q.SigAlg),
    signature: one(q.Signature),
    signedQuery: signedQuery(ctx.querystring, 'SAMLRequest'),
  };
}

function fromForm(ctx: Context): BoundMessage {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const relay = one(body?.RelayState);
  return { binding: 'post', message: str(body, 'SAMLRequest'), ...(relay === undefined ? {} : { relayState: relay }) };
}

/** The page that moves the browser on: a form the script submits (a button without it). */
function step(ctx: Context, s: BrowserStep, title: string, text: string): void {
  if (s.kind === 'redirect') return see(ctx, s.url);
  ctx.set('Cache-Control', 'no-store');
  send(
    ctx,
    200,
    page(
      { title, autopost: true },
      html`<section>
        <p>${text}</p>
        <form method="post" action="${s.url}" data-autopost>
          ${Object.entries(s.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
          <button type="submit">${t('pages.device.continue')}</button>
        </form>
      </section>`,
    ),
  );
}

/**
 * A refusal, as a page that names the app when it can and says what to do; nothing goes to the SP.
 * Anything that is not a refusal (a failure) is the error handler's.
 */
async function refused(ctx: Context, err: unknown, viewer: { signedIn: boolean; administrator: boolean }, csrf: string): Promise<void> {
  if (!isAppError(err)) throw err;
  const forbidden = err.code === 'forbidden';
  send(
    ctx,
    STATUS[err.code],
    page(
      { title: t(forbidden ? 'pages.saml.forbidden.title' : 'pages.saml.refused.title'), ...viewer, csrf },
      html`${notice('error', message(err, undefined, REFUSED))}
        <section>
          <p>${t(forbidden ? 'pages.saml.forbidden.text' : 'pages.saml.refused.text')}</p>
          <p class="links"><a href="/account">${t('error.your_account')}</a></p>
        </section>`,
    ),
  );
}

export function registerSaml(kit: PageKit, signinPage: SigninPage): void {
  const { core, router, names, html_ } = kit;
  /** Runs a SAML step; its refusals are pages of their own. */
  const saml =
    (handler: (ctx: Context) => Promise<void>) =>
    async (ctx: Context): Promise<void> => {
      try {
        await handler(ctx);
      } catch (err) {
        // Only the header's links depend on it (an administrator's include the console): a session
        // that cannot be read (its code logged) shows the guest's.
        const viewer = await (async () => {
          const caller = await pageCaller(ctx, core, names);
          if (!caller) return { signedIn: false, administrator: false };
          return { signedIn: true, administrator: (await core.auth.actor(caller)).principal.isAdmin === true };
        })().catch((e: unknown) => {
          if (!isAppError(e)) throw e;
          core.logger.warn('saml_refusal_session_unread', { code: e.code });
          return { signedIn: false, administrator: false };
        });
        await refused(ctx, err, viewer, csrfToken(ctx, names));
      }
    };
  // An SP's POST comes from its own site: no CSRF token, and no cookie is read before the hop.
  const parseForm = lazyKoaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: '64kb' });

  router.get('/saml/metadata', html_, async (ctx) => {
    ctx.type = 'application/samlmetadata+xml';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = await core.saml.metadata();
  });

  const start = async (ctx: Context, m: BoundMessage) => {
    const { handle } = await core.saml.start(guestCaller(ctx), m);
    // A page of our own moves on to a same-site GET: the session cookie is sent with it.
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Refresh', `0; url=/saml/continue/${handle}`);
    send(
      ctx,
      200,
      page(
        { title: t('pages.saml.signing_in') },
        html`<section>
          <p>${t('pages.saml.continuing')} <a href="/saml/continue/${handle}">${t('pages.device.continue')}</a></p>
        </section>`,
      ),
    );
  };
  router.get(
    '/saml/sso',
    html_,
    saml(async (ctx) => {
      const { handle } = await core.saml.start(guestCaller(ctx), fromQuery(ctx));
      see(ctx, `/saml/continue/${handle}`);
    }),
  );
  router.post(
    '/saml/sso',
    html_,
    parseForm,
    saml(async (ctx) => start(ctx, fromForm(ctx))),
  );

  router.get(
    '/saml/continue/:handle',
    html_,
    saml(async (ctx) => {
      const handle = ctx.params.handle!;
      const caller = (await pageCaller(ctx, core, names)) ?? guestCaller(ctx);
      const result = await core.saml.continue(caller, handle);
      if (result.kind === 'signin') {
        return signinPage(ctx, {
          info: t(result.again ? 'pages.continue_to.again' : 'pages.continue_to', { app: result.spName }),
          returnTo: `/saml/continue/${handle}`,
        });
      }
      // The second factor is asked on Gatehouse's own page, which comes back here.
      if (result.kind === 'second_factor') return see(ctx, confirmAddress(`/saml/continue/${handle}`, true));
      if (result.kind === 'no_second_factor') {
        const administrator = (await core.auth.actor(caller)).principal.isAdmin === true;
        return secondFactorNeeded(ctx, { app: result.spName, back: result.answer, viewer: { administrator }, csrf: csrfToken(ctx, names) });
      }
      step(ctx, result, t('pages.saml.signing_in_to', { app: result.spName }), t('pages.saml.signing_you_in', { app: result.spName }));
    }),
  );

  // An IdP-initiated sign-in starts only here, from Gatehouse's own page (a same-site form).
  kit.post('/saml/start/:sp', async (ctx) => {
    const caller = (await pageCaller(ctx, core, names)) ?? guestCaller(ctx);
    const { handle } = await core.saml.startUnsolicited(caller, ctx.params.sp!);
    see(ctx, `/saml/continue/${handle}`);
  });

  const slo = async (ctx: Context, m: BoundMessage) => {
    const caller = (await pageCaller(ctx, core, names)) ?? guestCaller(ctx);
    const out = await core.saml.logout(caller, m);
    // A request that did not name this session's sign-in at the app keeps the session (and its cookie).
    if (!out.signedOut)
      return step(ctx, out, t('pages.saml.still_signed_in'), t('pages.saml.still_signed_in.text', { brand: look().brandName, app: out.spName }));
    clearTokens(ctx, names);
    step(ctx, out, t('pages.saml.signed_out'), t('pages.saml.signed_out.text', { app: out.spName }));
  };
  router.get(
    '/saml/slo',
    html_,
    saml(async (ctx) => slo(ctx, fromQuery(ctx))),
  );
  // A LogoutRequest posted from the SP's site carries no cookie: the page posts it again, same-site.
  router.post('/saml/slo', html_, parseForm, async (ctx) => {
    const m = fromForm(ctx);
    step(
      ctx,
      {
        kind: 'post',
        url: '/saml/slo/continue',
        fields: { SAMLRequest: m.message, ...(m.relayState === undefined ? {} : { RelayState: m.relayState }), csrf: csrfToken(ctx, names) },
      },
      t('pages.saml.signing_out'),
      t('pages.saml.signing_out.text'),
    );
  });
  kit.post(
    '/saml/slo/continue',
    saml(async (ctx) => slo(ctx, fromForm(ctx))),
  );
}
