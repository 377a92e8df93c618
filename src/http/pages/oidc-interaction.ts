/**
 * The OpenID Connect provider's login and consent steps on Gatehouse's pages. Login is the page
 * session (signed in through the signin action, with every rule); the client's allowed groups are
 * checked here; consent is asked once per client and scope set, never for first-party clients.
 */
import { AppError } from '../../errors';
import type { Context } from 'koa';
import type { OidcProvider } from '../oidc';
import type { MessageKey } from '../../core';
import { form, html, page, tm } from './html';
import { named, type PageKit, see, send, type SigninPage } from './kit';
import { look, t as tr } from './look';
import { csrfToken, pageCaller } from './session';
import { NOT_ALLOWED } from './oidc-words';
import { confirmAddress } from './confirm-return';
import { secondFactorNeeded } from './second-factor-needed';
/** What each scope lets an app do. Read by the request's scope names: no prototype, so `constructor` is no scope. */
const SCOPE_TEXT: Readonly<Record<string, MessageKey>> = Object.assign(Object.create(null) as Record<string, MessageKey>, {
  openid: 'pages.oidc.scope.openid',
  email: 'pages.oidc.scope.email',
  profile: 'pages.oidc.scope.profile',
  groups: 'pages.oidc.scope.groups',
  offline_access: 'pages.oidc.scope.offline_access',
});

/**
 * A claim a request can ask for by name (the `claims` parameter), in words, and the scope that
 * allows it: a claim is given only when the request's scopes allow it and the page showed it.
 * sub, amr, acr, auth_time and sid come with openid and every sign-in says them anyway.
 */
const CLAIM_TEXT: Readonly<Record<string, { text: MessageKey; scope: string }>> = Object.assign(
  Object.create(null) as Record<string, { text: MessageKey; scope: string }>,
  {
    email: { text: 'pages.oidc.claim.email', scope: 'email' },
    email_verified: { text: 'pages.oidc.claim.email_verified', scope: 'email' },
    name: { text: 'pages.oidc.claim.name', scope: 'profile' },
    preferred_username: { text: 'pages.oidc.claim.preferred_username', scope: 'profile' },
    groups: { text: 'pages.oidc.claim.groups', scope: 'groups' },
  },
);

/** "a", "a and b", "a, b and c", as the reader's language joins them. */
const inWords = (items: string[]) => new Intl.ListFormat(look().tr.lang, { type: 'conjunction' }).format(items);

type Missing = { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
/** The part of the provider's Grant read here: its scopes, and the claims refused (its `rejected`, as the provider keeps it). */
interface GrantView {
  getOIDCScope(): string;
}
const refusedOf = (grant: GrantView | undefined) => (grant as { rejected?: { openid?: { claims?: string[] } } } | undefined)?.rejected?.openid;

/** The claim names a request's `claims` parameter asks for (id_token and userinfo). */
function namedIn(parameter: unknown): string[] {
  let parsed: unknown = parameter;
  if (typeof parameter === 'string') {
    try {
      parsed = JSON.parse(parameter);
    } catch {
      return [];
    }
  }
  if (parsed === null || typeof parsed !== 'object') return [];
  const names = new Set<string>();
  for (const where of ['id_token', 'userinfo']) {
    const part = (parsed as Record<string, unknown>)[where];
    if (part !== null && typeof part === 'object' && !Array.isArray(part)) for (const name of Object.keys(part)) names.add(name);
  }
  return [...names];
}

/**
 * The claims a request asked for by name that it has not been given, split: those allowed by the
 * scopes it asks or was granted before (shown on the page, then given) and the others (refused).
 * A claim refused before is asked again once its scope is.
 */
function askedClaims(
  details: { params: Record<string, unknown>; prompt: { details: unknown } },
  grant: GrantView | undefined,
): { allowed: string[]; refused: string[] } {
  const scopes = new Set([...String(details.params.scope ?? 'openid').split(' '), ...(grant?.getOIDCScope().split(' ') ?? [])]);
  const rejected = new Set(refusedOf(grant)?.claims ?? []);
  const missing = (details.prompt.details as Missing).missingOIDCClaims ?? [];
  const asked = [...new Set([...missing, ...namedIn(details.params.claims).filter((c) => rejected.has(c))])];
  const allows = (c: string) => c in CLAIM_TEXT && scopes.has(CLAIM_TEXT[c]!.scope);
  return { allowed: asked.filter(allows), refused: asked.filter((c) => !allows(c)) };
}

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

  /**
   * The consent given: the scopes asked, and of the claims asked by name only those the scopes
   * allow (the page showed them); the others are refused, so no token carries them.
   */
  /** The grant this interaction adds to, if the client has one. */
  const grantOf = async (details: Details) => {
    const provider = await oidc.provider();
    return details.grantId ? await provider.Grant.find(details.grantId) : undefined;
  };

  /**
   * The consent given: the scopes asked, and of the claims asked by name only those the scopes
   * allow (the page showed them); the others are refused, so no token carries them.
   */
  const grantAll = async (details: Details) => {
    const provider = await oidc.provider();
    const { prompt, params, session } = details;
    const grant = (await grantOf(details)) ?? new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
    const missing = prompt.details as Missing;
    const { allowed, refused } = askedClaims(details, grant);
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    // A claim refused before whose scope is granted now is no longer refused (a refused claim is
    // kept out of userinfo too).
    const granted = new Set(grant.getOIDCScope().split(' '));
    const before = refusedOf(grant);
    if (before?.claims) before.claims = before.claims.filter((c) => !(c in CLAIM_TEXT && granted.has(CLAIM_TEXT[c]!.scope)));
    if (allowed.length > 0) grant.addOIDCClaims(allowed);
    if (refused.length > 0) grant.rejectOIDCClaims(refused);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    return grant.save();
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
      // Said in the reader's language: the error page shows this message as it is.
      throw new AppError('invalid_input', tr('pages.oidc.expired'));
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
          info: tr(again ? 'pages.continue_to.again' : 'pages.continue_to', { app: policy.name }),
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
    const claims = askedClaims(details, await grantOf(details));
    t.send(
      ctx,
      200,
      page(
        { title: tr('pages.oidc.consent.title', { app: policy.name }), csrf, signedIn: true },
        html`<section>
          <p>${tm('pages.oidc.consent.asks', { app: html`<strong>${named(policy.name)}</strong>` })}</p>
          <ul>
            ${scopes.map((x) => html`<li>${tr(SCOPE_TEXT[x]!)}</li>`)}
          </ul>
          ${
            claims.allowed.length > 0
              ? html`<p>${tr('pages.oidc.consent.by_name')}</p>
                  <ul>
                    ${[...new Set(claims.allowed.map((c) => tr(CLAIM_TEXT[c]!.text)))].map((x) => html`<li>${x}</li>`)}
                  </ul>`
              : ''
          }
          ${
            claims.refused.length > 0
              ? html`<p>
                  ${tr('pages.oidc.consent.refused', {
                    claims: inWords([...new Set(claims.refused.map((c) => (c in CLAIM_TEXT ? tr(CLAIM_TEXT[c]!.text) : c)))]),
                  })}
                </p>`
              : ''
          }
          <div class="links">
            ${form(`/oidc/interaction/${details.uid}/consent`, csrf, tr('pages.oidc.consent.allow'), [])}${form(`/oidc/interaction/${details.uid}/deny`, csrf, tr('pages.oidc.consent.deny'), [], { secondary: true })}
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
