/**
 * The OpenID Connect provider's login and consent steps on Gatehouse's pages. Login is the page
 * session (signed in through the signin action, with every rule); the client's allowed groups are
 * checked here; consent is asked once per client and scope set, never for first-party clients.
 */
import { AppError } from '../../errors';
import type { Context } from 'koa';
import type { OidcProvider } from '../oidc';
import { form, html, page } from './html';
import { type PageKit, see, send, type SigninPage } from './kit';
import { csrfToken, pageCaller } from './session';
import { NOT_ALLOWED } from './oidc-words';
import { confirmAddress } from './confirm-return';
import { secondFactorNeeded } from './second-factor-needed';
/** What each scope lets an app do. Read by the request's scope names: no prototype, so `constructor` is no scope. */
const SCOPE_TEXT: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  openid: 'know who you are on this server (a stable id)',
  email: 'see your email address and whether it is confirmed',
  profile: 'see your name',
  groups: 'see the names of your groups',
  offline_access: 'stay signed in when you are away (a refresh token)',
});

export function registerInteractions(kit: PageKit, oidc: OidcProvider, signinPage: SigninPage): void {
  const { core, router, names, html_, post } = kit;
  const t = { names, post, send, see, signinPage, html_ };
  type Details = Awaited<ReturnType<Awaited<ReturnType<OidcProvider['provider']>>['interactionDetails']>>;
  const finish = async (ctx: Context, result: Record<string, unknown>) => {
    const provider = await oidc.provider();
    t.see(ctx, await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
  };
  const denied = (ctx: Context) => finish(ctx, { error: 'access_denied', error_description: NOT_ALLOWED });
  /** What the request asks of the sign-in (acr_values, claims), for the core to read. */
  const asksOf = (details: Details) => ({ acrValues: details.params.acr_values, claims: details.params.claims });

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

  /** When this interaction first asked for a sign-in (ms), recorded on its first visit. */
  const askedAt = async (details: Details): Promise<number> => {
    const kept = details.lastSubmission as { gatehouseAskedAt?: number } | undefined;
    if (typeof kept?.gatehouseAskedAt === 'number') return kept.gatehouseAskedAt;
    const now = core.clock.now();
    // lastSubmission is the interaction's own storage that finish() never merges (mergeWithLastSubmission: false).
    details.lastSubmission = { ...details.lastSubmission, gatehouseAskedAt: now };
    await details.persist();
    return now;
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
      // prompt=login (and max_age=0) want a sign-in made during this interaction; max_age one at
      // most that old. An older page session does not answer them: the person signs in again
      // (password, TOTP). When the interaction first asked is kept in the interaction itself, in
      // milliseconds: whole seconds (auth_time, the request's iat) let a sign-in made in the same
      // second as the request pass for a new one.
      const reasons = details.prompt.reasons;
      const maxAge = Number(details.params.max_age);
      const mustBeNew = reasons.includes('login_prompt') || (reasons.includes('max_age') && maxAge === 0);
      const notBefore = mustBeNew
        ? (await askedAt(details)) + 1
        : reasons.includes('max_age') && Number.isFinite(maxAge)
          ? core.clock.now() - maxAge * 1000
          : 0;
      if (!session || session.signedInAt < notBefore) {
        const policy = await core.oidc.clientPolicy(clientId, null);
        const again = session !== null;
        return t.signinPage(ctx, {
          info: again ? `Sign in again to continue to ${policy.name}.` : `Sign in to continue to ${policy.name}.`,
          returnTo: `/oidc/interaction/${details.uid}`,
        });
      }
      // The core answers the login: the client's gate, then whether the sign-in meets what the
      // client and the request need (step-up: the second factor asked, or a page saying there is none).
      const answer = await core.oidc.answerLogin(clientId, session, asksOf(details));
      if (answer.kind === 'not_allowed') return denied(ctx);
      if (answer.kind === 'second_factor') return t.see(ctx, confirmAddress(`/oidc/interaction/${details.uid}`, true));
      if (answer.kind === 'no_second_factor') {
        const administrator = (await core.auth.actor(caller)).principal.isAdmin === true;
        const csrf = csrfToken(ctx, t.names);
        return secondFactorNeeded(ctx, {
          app: answer.client,
          back: { url: `/oidc/interaction/${details.uid}/unmet`, fields: { csrf } },
          viewer: { administrator },
          csrf,
        });
      }
      return finish(ctx, { login: answer.login });
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
  // The application is told why, in the core's words (access_denied; unmet_authentication_requirements when the request itself asked).
  t.post('/oidc/interaction/:uid/unmet', async (ctx) => {
    const details = await detailsOf(ctx);
    await finish(ctx, core.oidc.unmetAnswer(asksOf(details)));
  });
  t.post('/oidc/interaction/:uid/deny', async (ctx) => {
    await detailsOf(ctx);
    await finish(ctx, { error: 'access_denied', error_description: 'the account holder did not allow it' });
  });
}
