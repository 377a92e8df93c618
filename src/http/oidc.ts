/**
 * "Sign in with Gatehouse": the OpenID Connect provider (`oidc-provider`, the certified Node
 * implementation, itself a Koa app) in the same server. Issuer = the public URL; discovery at
 * /.well-known/openid-configuration; endpoints under /oidc/; the same signing keys as
 * Gatehouse's tokens (the provider is rebuilt when they rotate). Its state lives in the store
 * (core.oidc.adapter), so every instance shares it. Login and consent are Gatehouse's pages
 * (pages/routes.ts, /oidc/interaction/<uid>), which run the signin action with every rule.
 */
import type { Context, Next } from 'koa';
// Types only: the library (the largest part of the executable) is loaded when /oidc is first used.
import type { default as Provider, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { ACR_VALUES, AUDIENCE_METADATA, type Core, ID_TOKEN_CLAIMS_METADATA } from '../core';
import { errorPage, html, page, PAGE_CSP, raw } from './pages/html';
import { clearTokens, cookieNames, guestCaller, pageCaller, readCookie, tokenCaller } from './pages/session';
import { devicePages } from './pages/device';

const ROUTES = {
  authorization: '/oidc/auth',
  token: '/oidc/token',
  userinfo: '/oidc/me',
  end_session: '/oidc/session/end',
  revocation: '/oidc/token/revocation',
  introspection: '/oidc/token/introspection',
  jwks: '/oidc/jwks',
  registration: '/oidc/reg',
  pushed_authorization_request: '/oidc/request',
  // The device flow's page for people is on the pages' paths: RFC 8628 wants a short URI to type.
  code_verification: '/device',
  device_authorization: '/oidc/device/auth',
  backchannel_authentication: '/oidc/backchannel',
};

/** The pages' policy, with script-src spelled out so the provider can add its form_post script's hash. */
const OIDC_CSP = `${PAGE_CSP}; script-src 'self'`;

/** Where a sign-in on the pages returns to, besides the account page: an OIDC interaction, or a SAML sign-in in progress. */
export const INTERACTION_PATH = /^\/(oidc\/interaction|saml\/continue)\/[A-Za-z0-9_-]{1,64}$/;

export class OidcProvider {
  private current: { version: string; provider: Provider; handle: ReturnType<Provider['callback']> } | null = null;
  private building: Promise<Provider> | null = null;

  constructor(private readonly core: Core) {}

  /** The provider for the current signing keys (rebuilt after a rotation). */
  async provider(fresh = false): Promise<Provider> {
    const keys = await this.core.oidc.signingKeys(fresh);
    if (this.current?.version === keys.version) return this.current.provider;
    this.building ??= this.build(keys).finally(() => (this.building = null));
    return this.building;
  }

  /** The provider's request handler, made once per provider (Koa composes it on each callback()). */
  private async handler(fresh: boolean): Promise<ReturnType<Provider['callback']>> {
    await this.provider(fresh);
    return this.current!.handle;
  }

  private async build(keys: { version: string; keys: ReadonlyArray<Record<string, unknown>> }): Promise<Provider> {
    const core = this.core;
    const cookieKey = await core.oidc.cookieKey();
    const { default: Provider, interactionPolicy, errors } = await import('oidc-provider');
    const names = cookieNames(core.config.publicUrl, core.config.cookieDomain);
    const { Check } = interactionPolicy;
    /** The account of this browser's page session (renewed with its refresh token if needed), or null. */
    const pageSession = async (ctx: KoaContextWithOIDC) => {
      const caller = await pageCaller(ctx as unknown as Context, core, names);
      return caller ? core.oidc.pageSession(caller) : null;
    };
    const policy = interactionPolicy.base();
    const login = policy.get('login')!;
    // The provider's session lives only as long as the pages' session of the same account: after
    // a sign-out on the pages (or a revoked session, or another person signing in on this
    // browser), the next authorization asks again, prompt=none included (login_required).
    login.checks.add(
      new Check('gatehouse_session', 'the Gatehouse session ended or belongs to another account', 'login_required', async (ctx) => {
        const provided = ctx.oidc.session;
        if (!provided?.accountId) return Check.NO_NEED_TO_PROMPT; // no_session asks already
        const page = await pageSession(ctx);
        if (page?.sub !== provided.accountId) return Check.REQUEST_PROMPT;
        // The session's facts as the provider last heard them: after a sign-in again or a second
        // factor added in the same session, the interaction tells it anew (auth_time, acr, amr).
        if (provided.loginTs !== page.authTime || provided.acr !== page.acr) return Check.REQUEST_PROMPT;
        // Its ID tokens name the Gatehouse session (sid), and its end is told to the client.
        const clientId = ctx.oidc.client?.clientId;
        if (clientId && provided.sidFor(clientId) !== page.sessionId) {
          provided.sidFor(clientId, page.sessionId);
          await core.oidc.signedIn(page.sessionId, clientId);
        }
        return Check.NO_NEED_TO_PROMPT;
      }),
    );
    // Step-up: the core decides whether the provider's session is answered for this client and
    // request (a client that needs two factors, a request that asks for them); when not, the
    // interaction runs and the core says there what it does (ask for the second factor, or tell
    // the person they have none).
    login.checks.add(
      new Check('gatehouse_two_factor', 'this application needs a second factor', 'login_required', async (ctx) => {
        const accountId = ctx.oidc.session?.accountId;
        if (!accountId || !ctx.oidc.client) return Check.NO_NEED_TO_PROMPT;
        const asks = { acrValues: ctx.oidc.params?.acr_values, claims: ctx.oidc.claims };
        return (await core.oidc.loginMeets(ctx.oidc.client.clientId, ctx.oidc.session?.acr, asks)) ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
      }),
    );
    // The client's allowed groups, checked at every authorization (membership can end at any time):
    // the interaction then ends at the client with access_denied.
    login.checks.add(
      new Check('gatehouse_allowed_groups', 'this account may not sign in to this application', 'access_denied', async (ctx) => {
        const accountId = ctx.oidc.session?.accountId;
        if (!accountId || !ctx.oidc.client) return Check.NO_NEED_TO_PROMPT;
        return (await core.oidc.clientPolicy(ctx.oidc.client.clientId, accountId)).allowed ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
      }),
    );
    const device = devicePages(core, names, `${new URL(core.config.publicUrl).pathname.replace(/\/$/, '')}${ROUTES.code_verification}`);
    // Client-credentials tokens are JWTs (RFC 9068, typ at+jwt) for the client's one audience,
    // signed with the key that signs everything else.
    const signingAlg = String(keys.keys[0]?.alg ?? 'RS256');
    // The audience rides in the client's metadata (read once with the client), only for this grant.
    /** The claims a client chose for its ID tokens (extraClientMetadata, read with the client). */
    const idTokenClaims = (client: { [ID_TOKEN_CLAIMS_METADATA]?: unknown } | undefined): string[] => {
      const chosen = client?.[ID_TOKEN_CLAIMS_METADATA];
      return Array.isArray(chosen) ? chosen.filter((c): c is string => typeof c === 'string') : [];
    };
    const credentialsAudience = (ctx: KoaContextWithOIDC, client: { [AUDIENCE_METADATA]?: unknown }) =>
      ctx.oidc.params?.grant_type === 'client_credentials' && typeof client[AUDIENCE_METADATA] === 'string' ? client[AUDIENCE_METADATA] : null;
    class StoreAdapter {
      constructor(model: string) {
        return core.oidc.adapter(model);
      }
    }
    const configuration: Configuration = {
      adapter: StoreAdapter as never,
      clients: [],
      extraClientMetadata: { properties: [AUDIENCE_METADATA, ID_TOKEN_CLAIMS_METADATA] },
      findAccount: async (ctx, sub, token) => {
        // Every code exchange, refresh and userinfo call holds the token against the client's
        // requirements as they stand now (its allowed groups, two factors): leaving the group, or
        // a client switched to two factors, ends the access a one-factor grant gave. A refusal is
        // the provider's own: invalid_grant at the token endpoint, 401 invalid_token at userinfo.
        const client = ctx.oidc?.client;
        const claims = client ? await core.oidc.account(sub, client.clientId, token && tokenUse(token)) : await core.oidc.claims(sub);
        if (!claims) return undefined;
        const inIdToken = idTokenClaims(client as { [ID_TOKEN_CLAIMS_METADATA]?: unknown } | undefined);
        return {
          accountId: sub,
          // Userinfo answers every claim the granted scopes allow. An ID token carries sub, the
          // claims the request's claims parameter asked of it, and those the client chose
          // (client add --id-token-claims); the provider then keeps only what the granted scopes allow.
          claims: async (use: string, _scope: string, asked?: Record<string, unknown>) =>
            use === 'id_token'
              ? {
                  sub: claims.sub,
                  ...Object.fromEntries(Object.entries(claims).filter(([k]) => inIdToken.includes(k) || (asked !== undefined && Object.hasOwn(asked, k)))),
                }
              : { ...claims },
        };
      },
      // With it on, an ID token issued beside an access token holds nothing its scopes ask for
      // (those are at userinfo, OIDC Core 5.4) whatever the client chose; findAccount decides instead.
      conformIdTokenClaims: false,
      // An access token records the level of the sign-in it was issued for (its code's, refresh
      // token's or device code's acr), so that userinfo and introspection can hold it against the
      // client's requirements at each use. Introspection answers it too, as RFC 9470 would have a
      // resource server read it.
      extraTokenClaims: async (ctx, token) => {
        if (token.kind !== 'AccessToken') return undefined;
        const { AuthorizationCode, RefreshToken, DeviceCode } = ctx.oidc.entities;
        const acr = (AuthorizationCode ?? RefreshToken ?? DeviceCode)?.acr;
        return typeof acr === 'string' ? { acr } : undefined;
      },
      // amr and acr ride with openid: how the person signed in (a passkey, a password, with TOTP
      // or not) and at which level (REFEDS single or multi-factor).
      acrValues: [...ACR_VALUES],
      claims: {
        openid: ['sub', 'amr', 'acr', 'auth_time', 'sid'],
        email: ['email', 'email_verified'],
        profile: ['name', 'preferred_username'],
        groups: ['groups'],
      },
      scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
      responseTypes: ['code'],
      pkce: { methods: ['S256'], required: (_ctx, client) => client.clientAuthMethod === 'none' },
      rotateRefreshToken: true,
      // Lifetimes (seconds): codes are short; refresh tokens and grants follow Gatehouse's sessions.
      ttl: {
        AccessToken: core.config.tokenTtl,
        AuthorizationCode: 60,
        IdToken: core.config.tokenTtl,
        Interaction: 3600,
        Session: 14 * 24 * 3600,
        Grant: 90 * 24 * 3600,
        RefreshToken: 30 * 24 * 3600,
        ClientCredentials: 600,
        DeviceCode: 600,
      },
      features: {
        devInteractions: { enabled: false },
        revocation: { enabled: true },
        // A token's own client may introspect it, no other: one client must not learn whether
        // another client's token is live, nor whose it is. And a person's token is live only while
        // the client's requirements hold (as at userinfo and refresh): else `active: false`.
        introspection: {
          enabled: true,
          allowedPolicy: async (ctx, client, token) =>
            token.clientId === client.clientId &&
            (token.kind === 'ClientCredentials' || (await core.oidc.account(token.accountId, token.clientId, tokenUse(token))) !== undefined),
        },
        rpInitiatedLogout: {
          enabled: true,
          // Gatehouse's own pages, not the library's samples.
          logoutSource: async (ctx, form) => {
            ctx.type = 'text/html; charset=utf-8';
            ctx.body = page(
              { title: 'Sign out?' },
              html`${raw(form)}
                <section>
                  <p>Sign out of Gatehouse and the applications you signed in to with it?</p>
                  <div class="links">
                    <button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Yes, sign me out</button
                    ><button type="submit" form="op.logoutForm" class="secondary">No, only this application</button>
                  </div>
                </section>`,
            );
          },
          postLogoutSuccessSource: async (ctx) => {
            ctx.type = 'text/html; charset=utf-8';
            ctx.body = page(
              { title: 'Signed out' },
              html`<section>
                <p>You are signed out.</p>
                <p class="links"><a href="/signin">Sign in again</a></p>
              </section>`,
            );
          },
        },
        userinfo: { enabled: true },
        // OpenID Connect Back-Channel Logout: discovery and the clients' metadata. The tokens are
        // sent by Gatehouse's delivery queue when a session ends, however it ends (the
        // library's own sender is switched off below).
        backchannelLogout: { enabled: true },
        claimsParameter: { enabled: true },
        // RFC 8628: user codes XXXX-XXXX from 20 consonants (no vowels: no words), 10 minutes.
        deviceFlow: {
          enabled: true,
          charset: 'base-20',
          mask: '****-****',
          userCodeInputSource: device.input,
          userCodeConfirmSource: device.confirm,
          successSource: device.success,
        },
        clientCredentials: { enabled: true },
        // Resource indicators only name the audience of client-credentials tokens: a person's
        // sign-in asking for a resource gets invalid_target, as does a client asking for another.
        resourceIndicators: {
          enabled: true,
          defaultResource: async (ctx, client, oneOf) => (oneOf ?? credentialsAudience(ctx, client as never) ?? undefined) as string,
          useGrantedResource: async () => false,
          getResourceServerInfo: async (ctx, indicator, client) => {
            const audience = credentialsAudience(ctx, client as never);
            if (audience === null || audience !== indicator) throw new errors.InvalidTarget('this client may not ask for that resource');
            return { scope: '', audience, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: signingAlg as 'RS256' } } };
          },
        },
      },
      routes: ROUTES,
      interactions: { policy, url: (_ctx, interaction) => `/oidc/interaction/${interaction.uid}` },
      enabledJWA: { idTokenSigningAlgValues: ['RS256', 'ES256'] },
      jwks: { keys: keys.keys as never },
      cookies: {
        keys: [cookieKey],
        names: { session: 'gatehouse_oidc_session', interaction: 'gatehouse_oidc_interaction', resume: 'gatehouse_oidc_resume' },
      },
      clientBasedCORS: () => false,
      // Consent once per client and scope set; first-party clients never ask.
      loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
        const client = ctx.oidc.client!;
        const session = ctx.oidc.session!;
        const grantId =
          ctx.oidc.result?.consent?.grantId ??
          session.grantIdFor(client.clientId) ??
          (session.accountId ? await core.oidc.latestGrant(session.accountId, client.clientId) : undefined);
        if (grantId) return ctx.oidc.provider.Grant.find(grantId);
        return undefined;
      },
      renderError: async (ctx, out) => {
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = errorPage(`${String(out.error)}: ${String(out.error_description ?? 'the request could not be completed')}`);
      },
    };
    const provider = new Provider(core.config.publicUrl, configuration);
    // Logout tokens go through the durable queue (retried, never lost, internal addresses refused):
    // the library's direct POST at its own end_session is not used. Every ID token names the
    // Gatehouse session (sid), for back-channel logout and RP-initiated logout alike.
    provider.Client.prototype.backchannelLogout = async () => undefined;
    provider.Client.prototype.includeSid = () => true;
    provider.proxy = core.config.trustProxy !== null;
    // The provider answers its own failures (500 server_error); the log keeps what they were.
    // Name and code only, as for every internal error: messages can carry values.
    const logServerError = (ctx: Pick<KoaContextWithOIDC, 'res'>, err: unknown) => {
      const e = err as (Error & { code?: string }) | null;
      const requestId = String(ctx.res.getHeader('X-Request-Id') ?? '') || null;
      core.logger.error('oidc_server_error', { request_id: requestId, name: e?.name ?? 'unknown', code: e?.code ?? null });
    };
    provider.on('server_error', logServerError);
    // "Yes, sign me out" also ends the Gatehouse session of the pages (their cookie and the session).
    // Only after that click: without a provider session the library confirms the logout with a
    // self-submitting form, which a cross-site link could trigger (logout CSRF).
    // Nor when the library ends its session on its own because the pages' session now belongs to
    // another account (its logout then returns to the authorization being resumed): the pages'
    // session is the new person's.
    const resuming = `${new URL(core.config.publicUrl).pathname.replace(/\/$/, '')}/oidc/auth/`;
    provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
      if (!ctx.oidc.params?.logout || !ctx.oidc.session?.accountId) return;
      const back = (ctx.oidc.session.state as { postLogoutRedirectUri?: string } | undefined)?.postLogoutRedirectUri;
      if (back && new URL(back, core.config.publicUrl).pathname.startsWith(resuming)) return;
      const token = (readCookie(ctx as unknown as Context, names.session) ?? '').split('~')[0];
      clearTokens(ctx as unknown as Context, names);
      if (token) {
        // Already ended, or the store unavailable: the cookie is cleared either way; the log keeps the code.
        core.actions
          .run(tokenCaller(ctx as unknown as Context, token), 'user_account', 'signout', {})
          .catch((err: { code?: string }) => core.logger.warn('oidc_signout_incomplete', { code: err?.code ?? null }));
      }
    });
    // A token request is served its client from memory (oidc/support.ts); a client removed or
    // changed meanwhile, on any instance, is refused before the answer leaves.
    provider.use(async (ctx, next) => {
      if (ctx.method !== 'POST' || ctx.path !== ROUTES.token) return next();
      // Whatever the provider answered (a bad code too): a stale client is told invalid_client, as
      // a client read from the store would have been.
      let outcome: Awaited<ReturnType<Core['oidc']['tokenRequest']>>;
      try {
        outcome = await core.oidc.tokenRequest(next);
      } catch (err) {
        // A write of the request failed: nothing it answered may be used.
        logServerError(ctx, err);
        ctx.status = 500;
        ctx.body = { error: 'server_error', error_description: 'the request could not be completed' };
        return;
      }
      if (outcome === 'stale_client') {
        ctx.status = 401;
        ctx.body = { error: 'invalid_client', error_description: 'client authentication failed' };
      } else if (outcome === 'reused') {
        // Another request used the same code or refresh token first: as the provider answers a
        // second use one after the other (the grant is ended).
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'grant request is invalid' };
      }
    });
    provider.use(devicePolling(core.clock));
    this.current = { version: keys.version, provider, handle: provider.callback() };
    return provider;
  }

  /** Hands discovery and /oidc/* (but the interaction pages) to the provider. */
  middleware() {
    return async (ctx: Context, next: Next) => {
      const path = ctx.path;
      const device = path === ROUTES.code_verification || path.startsWith(`${ROUTES.code_verification}/`);
      const ours = device || path === '/.well-known/openid-configuration' || (path.startsWith('/oidc/') && !path.startsWith('/oidc/interaction/'));
      if (!ours) return next();
      // A user code entered (or confirmed) from an address that entered too many wrong ones waits.
      if (device && ctx.method === 'POST') {
        ctx.state.errorStyle = 'html';
        await this.core.oidc.assertCodeEntryAllowed(guestCaller(ctx));
      }
      // Where a flow begins, the signing keys are checked against the store now (elsewhere at most once a second).
      const handle = await this.handler(path === '/.well-known/openid-configuration' || path === ROUTES.authorization);
      // The provider answers on its own (HTML too: errors, logout, form_post): the pages' headers.
      // It adds the hash of its own inline form_post script to script-src.
      ctx.res.setHeader('Content-Security-Policy', OIDC_CSP);
      ctx.res.setHeader('X-Frame-Options', 'DENY');
      ctx.res.setHeader('Referrer-Policy', 'same-origin');
      ctx.respond = false;
      // The provider builds every link (discovery, verification_uri) from the request's host:
      // the request names the public URL's, whatever Host or X-Forwarded-Host it came with.
      const own = new URL(this.core.config.publicUrl);
      ctx.req.headers.host = own.host;
      ctx.req.headers['x-forwarded-host'] = own.host;
      ctx.req.headers['x-forwarded-proto'] = own.protocol.replace(':', '');
      await handle(ctx.req, ctx.res);
    };
  }
}

/**
 * A token the provider hands to findAccount or introspection, as the core's use of it: its grant,
 * and the level it recorded of its sign-in (a code's, refresh token's or device code's `acr`; an
 * access token's, in the extra claims extraTokenClaims gave it).
 */
function tokenUse(token: { grantId?: unknown; acr?: unknown; extra?: unknown }): { grantId?: string; acr: string | undefined } {
  const extra = token.extra as { acr?: unknown } | undefined;
  const acr = typeof token.acr === 'string' ? token.acr : typeof extra?.acr === 'string' ? extra.acr : undefined;
  return { ...(typeof token.grantId === 'string' ? { grantId: token.grantId } : {}), acr };
}

/**
 * RFC 8628 3.2 and 3.5: the device authorization names its polling interval (5 s), and a device
 * polling its token faster than its interval gets slow_down, its interval growing by 5 s for the
 * rest of the flow. A pending poll is one read and no write (the
 * library answers it); the times are kept here, in this instance's memory, for the 10 minutes a
 * code lives. (A device whose polls alternate between instances is held back by each one alone.)
 */
export function devicePolling(clock: { now(): number }) {
  const polls = new Map<string, { at: number; interval: number }>();
  const LIFETIME_MS = 11 * 60 * 1000;
  return async (ctx: KoaContextWithOIDC, next: Next) => {
    await next();
    const body = ctx.body as { error?: string; device_code?: string } | undefined;
    if (ctx.oidc?.route === 'device_authorization' && ctx.status === 200 && typeof body?.device_code === 'string') {
      ctx.body = { ...body, interval: 5 };
      return;
    }
    if (ctx.oidc?.route !== 'token' || body?.error !== 'authorization_pending') return;
    const code = String(ctx.oidc.params?.device_code ?? '');
    const now = clock.now();
    if (polls.size > 10_000) for (const [k, v] of polls) if (now - v.at > LIFETIME_MS) polls.delete(k);
    const seen = polls.get(code);
    // Half a second of slack: a device that waits exactly its interval arrives with the network's jitter.
    if (seen && now - seen.at < seen.interval * 1000 - 500) {
      seen.interval += 5;
      seen.at = now;
      ctx.body = { error: 'slow_down', error_description: `you are polling too quickly: wait ${seen.interval} s between requests` };
      return;
    }
    polls.set(code, { at: now, interval: seen?.interval ?? 5 });
  };
}
