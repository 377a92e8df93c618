/**
 * Gatehouse as the client of a provider that speaks OAuth 2.0 but not OpenID Connect (contract
 * section 26): GitHub (and GitHub Enterprise Server), and the `oauth2` kind for the rest. There is
 * no discovery and no ID token, so the flow is RFC 6749's code flow with PKCE (RFC 7636) and state,
 * then the provider's own API says who signed in, with the access token the exchange gave.
 *
 * Built on `openid-client`'s plain OAuth 2.0 functions (a Configuration made from the endpoints
 * the operator gave, buildAuthorizationUrl, authorizationCodeGrant with no ID token expected,
 * fetchProtectedResource): the same library, state and PKCE checks and token-response checks as
 * the OpenID Connect providers, rather than a second hand-written client. GitHub's token endpoint
 * answers JSON when asked with `Accept: application/json`, which the library sends; its API
 * calls carry GitHub's documented headers (below).
 *
 * What the provider did at its own sign-in is not known here (no ID token, no `amr`): a sign-in
 * through such a provider is one factor, whatever that provider asked.
 */
import { AppError } from '../errors';
import type { ProviderRow } from '../store/upstream';
import { githubSettings, oauth2Settings } from './providers';
import type * as Client from 'openid-client';

const UPSTREAM_TIMEOUT_S = 10;
/** At most this many pages of 100 of a person's addresses, organisations or teams are read. */
const MAX_PAGES = 10;
const USER_AGENT = 'Gatehouse';

const library = (): Promise<typeof Client> => import('openid-client');

/** The identity an OAuth 2.0 provider's API gave (as an OIDC provider's ID token does), with GitHub's facts. */
export interface OAuthIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  /** GitHub: the person's teams, `org/slug` in lower case (read only when some team maps to a group). */
  teams?: string[];
}

/** Why a provider's answer, checked and true, still lets nobody in: shown to the person as it is. */
export class Denied extends Error {
  constructor(
    readonly reason: 'no_verified_email' | 'not_in_organization',
    message: string,
  ) {
    super(message);
  }
}

/** The endpoints of a provider of this kind. */
function endpointsOf(p: ProviderRow): { authorization: string; token: string } {
  if (p.kind === 'github') return { authorization: `${p.issuer}/login/oauth/authorize`, token: `${p.issuer}/login/oauth/access_token` };
  const o = oauth2Settings(p);
  return { authorization: o.authorization_url, token: o.token_url };
}

async function configurationOf(p: ProviderRow): Promise<Client.Configuration> {
  const lib = await library();
  const { authorization, token } = endpointsOf(p);
  const config = new lib.Configuration(
    { issuer: new URL(authorization).origin, authorization_endpoint: authorization, token_endpoint: token },
    p.client_id,
    undefined,
    lib.ClientSecretPost(p.client_secret),
  );
  config.timeout = UPSTREAM_TIMEOUT_S;
  // An http endpoint is the operator's explicit choice (a provider on the same host or network).
  if ([authorization, token, p.kind === 'github' ? githubSettings(p).api_url : oauth2Settings(p).userinfo_url].some((u) => u.startsWith('http:'))) {
    lib.allowInsecureRequests(config);
  }
  return config;
}

/** The authorization URL: code flow, PKCE S256, a fresh state (no nonce: there is no ID token to carry it). */
export async function oauthAuthorizationUrl(p: ProviderRow, redirectUri: string): Promise<{ url: string; state: string; nonce: string; verifier: string }> {
  const lib = await library();
  const config = await configurationOf(p);
  const verifier = lib.randomPKCECodeVerifier();
  const state = lib.randomState();
  const scopes = JSON.parse(p.scopes) as string[];
  const url = lib.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    code_challenge: await lib.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    // GitHub: the sign-in page does not offer to create a GitHub account in the middle of it.
    ...(p.kind === 'github' ? { allow_signup: 'false' } : {}),
  });
  return { url: url.href, state, nonce: '-', verifier };
}

/** A response that is not 2xx: the API refused the token or failed. */
class ApiError extends Error {}

/** One GET of the provider's API with the access token, as JSON. */
async function getJson(lib: typeof Client, config: Client.Configuration, token: string, url: string, headers: Record<string, string>): Promise<unknown> {
  const response = await lib.fetchProtectedResource(config, token, new URL(url), 'GET', undefined, new Headers(headers));
  if (!response.ok) {
    await response.body?.cancel();
    throw new ApiError(`${new URL(url).pathname} answered ${response.status}`);
  }
  return response.json();
}

/** GitHub's documented headers for its REST API: its media type, the API version, a User-Agent (Bearer is the library's). */
const GITHUB_HEADERS = { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28', 'User-Agent': USER_AGENT };

/** Every page of a GitHub list (100 a page, at most MAX_PAGES). */
async function githubList(lib: typeof Client, config: Client.Configuration, token: string, url: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const items = await getJson(lib, config, token, `${url}?per_page=100&page=${page}`, GITHUB_HEADERS);
    if (!Array.isArray(items)) throw new ApiError(`${new URL(url).pathname} did not answer a list`);
    out.push(...items);
    if (items.length < 100) break;
  }
  return out;
}

const str = (v: unknown, max: number): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);

/**
 * Who signed in at GitHub: the numeric id of GET /user (a login can be renamed and taken by
 * someone else; the id cannot), the primary verified address of GET /user/emails (GET /user's
 * `email` is the public one, which may be unverified or absent), the organisation gate (GET
 * /user/orgs) and the teams (GET /user/teams).
 */
async function githubIdentity(lib: typeof Client, config: Client.Configuration, p: ProviderRow, token: string): Promise<OAuthIdentity> {
  const settings = githubSettings(p);
  const api = settings.api_url;
  const user = (await getJson(lib, config, token, `${api}/user`, GITHUB_HEADERS)) as Record<string, unknown> | null;
  const id = user?.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new ApiError('/user has no numeric id');
  if (settings.allowed_org !== null) {
    const orgs = await githubList(lib, config, token, `${api}/user/orgs`);
    const member = orgs.some(
      (o) => typeof (o as { login?: unknown })?.login === 'string' && (o as { login: string }).login.toLowerCase() === settings.allowed_org,
    );
    if (!member) {
      throw new Denied(
        'not_in_organization',
        `Only members of the GitHub organization ${settings.allowed_org} sign in here, and GitHub did not show you as one. If you are a member, grant this app access to the organization on GitHub, then try again.`,
      );
    }
  }
  const emails = await githubList(lib, config, token, `${api}/user/emails`);
  const primary = emails.find((e) => {
    const x = e as { primary?: unknown; verified?: unknown; email?: unknown };
    return x?.primary === true && x.verified === true && str(x.email, 254) !== null;
  }) as { email: string } | undefined;
  if (!primary) {
    throw new Denied(
      'no_verified_email',
      'Your GitHub account has no verified primary email address, which an account here needs. Verify one on GitHub (Settings, Emails), then try again.',
    );
  }
  let teams: string[] | undefined;
  if (settings.team_groups.length > 0) {
    teams = [];
    for (const t of await githubList(lib, config, token, `${api}/user/teams`)) {
      const x = t as { slug?: unknown; organization?: { login?: unknown } };
      const org = str(x?.organization?.login, 100);
      const slug = str(x?.slug, 100);
      if (org && slug) teams.push(`${org.toLowerCase()}/${slug.toLowerCase()}`);
    }
  }
  return {
    subject: String(id),
    email: primary.email,
    emailVerified: true,
    name: str(user!.name, 200) ?? str(user!.login, 100),
    ...(teams ? { teams } : {}),
  };
}

/** A field of a JSON object, by its name or names joined by dots. */
function pick(body: unknown, path: string): unknown {
  let v = body;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Who signed in at a generic OAuth 2.0 provider: its user-info answer's fields, as the operator named them. */
async function genericIdentity(lib: typeof Client, config: Client.Configuration, p: ProviderRow, token: string): Promise<OAuthIdentity> {
  const o = oauth2Settings(p);
  const info = await getJson(lib, config, token, o.userinfo_url, { Accept: 'application/json', 'User-Agent': USER_AGENT });
  const raw = pick(info, o.id_field);
  const subject = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : str(raw, 255);
  if (subject === null) throw new ApiError(`the user-info answer has no ${o.id_field}`);
  return {
    subject,
    email: str(pick(info, o.email_field), 254),
    emailVerified: o.email_verified_field !== null && pick(info, o.email_verified_field) === true,
    name: o.name_field === null ? null : str(pick(info, o.name_field), 200),
  };
}

/**
 * Exchanges the callback's code (the library checks the state and sends the PKCE verifier) and
 * asks the provider's API who signed in. `unreachable` and `refused` are the caller's to word.
 */
export async function oauthExchange(
  p: ProviderRow,
  callbackUrl: URL,
  checks: { state: string; verifier: string },
): Promise<{ identity: OAuthIdentity } | { denied: Denied }> {
  const lib = await library();
  const config = await configurationOf(p);
  const tokens = await lib.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: checks.verifier,
    expectedState: checks.state,
    idTokenExpected: false,
  });
  if (tokens.token_type !== 'bearer')
    throw new AppError('invalid_input', `the token endpoint gave a ${tokens.token_type.slice(0, 20)} token, not a bearer token`);
  try {
    return { identity: await (p.kind === 'github' ? githubIdentity : genericIdentity)(lib, config, p, tokens.access_token) };
  } catch (err) {
    if (err instanceof Denied) return { denied: err };
    throw err;
  }
}
