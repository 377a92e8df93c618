/**
 * Relying parties ("Sign in with Gatehouse"), registered from the shell. Public clients (SPAs,
 * native apps) have no secret and must use PKCE; confidential ones get a secret shown once.
 * `allowed_groups`: only members of those groups may sign in to the client.
 *
 * A client has one or more grants: the authorization code (a browser comes back to a redirect
 * URI), the device flow (RFC 8628: a TV or a command line shows a code, the person confirms it on
 * /device) and client credentials (a machine acting as itself, with JWT access tokens for one
 * audience: a resource server's identifier).
 */
import { iso } from '../clock';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { newShellSafeId } from '../auth/ids';
import type { Tx } from '../store/connection';
import { deleteClient, findClient, insertClient, listClients, OidcClientRow, setClientSecret, updateClient } from '../store/oidc';
import { assertNotManaged, unlessManaged } from '../managed/managed-by';
import { lockAccounts } from '../store/accounts';
import { resolveGateGroup } from '../groups/manage';
import { findGroupsByReference } from '../store/groups';
import { checkTargetUrl, outboundUrl, targetPolicy, withoutUserinfo } from '../runtime/targets';

/** What a client may do at the token endpoint, as the shell names it. */
export type ClientGrant = 'authorization_code' | 'device_code' | 'client_credentials';

export interface NewClient {
  name: string;
  /** The authorization code grant, for the redirect URIs given (none: no such grant). */
  redirectUris: readonly string[];
  /** The device authorization grant (RFC 8628). */
  device?: boolean;
  /** The client credentials grant: tokens for the client itself, for `audience`. */
  credentials?: boolean;
  /** The resource server the client-credentials tokens are for (their aud); `urn:gatehouse:client:<id>` when not given. */
  audience?: string;
  postLogoutRedirectUris?: readonly string[];
  public?: boolean;
  firstParty?: boolean;
  allowedGroups?: readonly string[];
  /** Sign-ins need a second factor: a one-factor session is asked for it first. */
  twoFactor?: boolean;
  /** Where the end of a session that signed in to it is told (OpenID Connect Back-Channel Logout). */
  backchannelLogoutUri?: string;
  /** Claims its ID tokens carry as well as userinfo (each only when its scope was granted): names from ID_TOKEN_CLAIMS. */
  idTokenClaims?: readonly string[];
}

/** What `client set` changes; what is left out stays. */
export interface ClientChanges {
  twoFactor?: boolean;
  /** '' removes it. */
  backchannelLogoutUri?: string;
  /** The claims its ID tokens carry (empty: none beyond sub and how the person signed in). */
  idTokenClaims?: readonly string[];
}

/**
 * Claims a client may have in its ID tokens as well as at userinfo, and the scope each needs.
 * OpenID Connect Core (5.4) puts what a scope asks for at userinfo when an access token is issued,
 * and Gatehouse follows it; but oauth2-proxy, Kubernetes' API server and others read only the ID
 * token. `email` brings `email_verified` with it: an app that trusts an address checks it beside it.
 */
export const ID_TOKEN_CLAIMS: Readonly<Record<string, 'email' | 'profile' | 'groups'>> = {
  email: 'email',
  email_verified: 'email',
  name: 'profile',
  preferred_username: 'profile',
  groups: 'groups',
};

/** The provider's client metadata property that holds the claims its ID tokens carry. */
export const ID_TOKEN_CLAIMS_METADATA = 'gatehouse_id_token_claims';

/** The claims an operator named, checked, each once, in ID_TOKEN_CLAIMS' order. */
export function parseIdTokenClaims(names: readonly string[]): string[] {
  const given = names.map((n) => n.trim()).filter((n) => n !== '');
  for (const n of given) {
    if (!Object.hasOwn(ID_TOKEN_CLAIMS, n)) {
      throw new AppError('invalid_input', `{--id-token-claims} names claims from: ${Object.keys(ID_TOKEN_CLAIMS).join(', ')} (got ${n.slice(0, 40)})`);
    }
  }
  return Object.keys(ID_TOKEN_CLAIMS).filter((c) => given.includes(c));
}

/** The claims an ID token of the client carries beyond sub: those chosen, and email_verified with email. */
export function idTokenClaimsOf(chosen: readonly string[]): string[] {
  return chosen.includes('email') && !chosen.includes('email_verified') ? [...chosen, 'email_verified'] : [...chosen];
}

export interface ClientView {
  client_id: string;
  name: string;
  public: boolean;
  first_party: boolean;
  grants: ClientGrant[];
  /** The aud of its client-credentials tokens (null without that grant). */
  audience: string | null;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  /** Names, for people; the gate itself holds the ids. */
  allowed_groups: string[];
  allowed_group_ids: string[];
  two_factor: boolean;
  backchannel_logout_uri: string | null;
  /** Claims its ID tokens carry as well as userinfo (when their scope was granted). */
  id_token_claims: string[];
  created_at: string;
}

interface Metadata {
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  token_endpoint_auth_method: 'none' | 'client_secret_basic';
  /** Absent on clients registered before grants were chosen: the authorization code. */
  grants?: ClientGrant[];
  audience?: string;
  backchannel_logout_uri?: string;
  /** Absent: none (userinfo only). */
  id_token_claims?: string[];
}

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';
const grantsOf = (m: Metadata): ClientGrant[] => m.grants ?? ['authorization_code'];

/** The OAuth grant types behind each of the shell's grants (refresh tokens come with a person's sign-in). */
function grantTypes(grants: readonly ClientGrant[]): string[] {
  const types = new Set<string>();
  for (const g of grants) {
    if (g === 'authorization_code') types.add('authorization_code').add('refresh_token');
    if (g === 'device_code') types.add(DEVICE_CODE).add('refresh_token');
    if (g === 'client_credentials') types.add('client_credentials');
  }
  return [...types];
}

/** The audience of a client's tokens when none was given: the client itself (an audience is a URI, RFC 8707). */
export const ownAudience = (clientId: string) => `urn:gatehouse:client:${clientId}`;

/** The provider's client metadata property that holds the audience of client-credentials tokens. */
export const AUDIENCE_METADATA = 'gatehouse_audience';

/** A resource indicator (RFC 8707): an absolute URI without a fragment. */
function audienceOf(raw: string): string {
  try {
    new URL(raw);
  } catch {
    throw new AppError('invalid_input', `{--audience} must be an absolute URI (https://api.example.com), got ${raw.slice(0, 100)}`);
  }
  if (raw.includes('#')) throw new AppError('invalid_input', '{--audience} must not have a #fragment');
  if (raw.length > 200) throw new AppError('invalid_input', '{--audience} must be at most 200 characters');
  return raw;
}

function redirectUri(raw: string, what: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('invalid_input', `${what} must be an absolute URL, got ${raw.slice(0, 100)}`);
  }
  if (u.hash) throw new AppError('invalid_input', `${what} must not have a #fragment`);
  const local = u.hostname === 'localhost' || u.hostname === '127.0.0.1' || u.hostname === '[::1]';
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && local)) throw new AppError('invalid_input', `${what} must be https (http only for localhost)`);
  return raw;
}

/**
 * A client as the shell shows it; its gate's groups by name (a deleted group shows as such), read
 * through `tx` (a configuration file's groups may be made in the transaction that reads them).
 */
export async function clientView(s: Services, row: OidcClientRow, tx: Tx = s.store.root): Promise<ClientView> {
  const m = JSON.parse(row.metadata) as Metadata;
  const ids = JSON.parse(row.allowed_groups) as string[];
  const names = new Map((await findGroupsByReference(tx, ids)).map((g) => [g.reference_id, g.name]));
  return {
    client_id: row.client_id,
    name: row.name,
    public: m.token_endpoint_auth_method === 'none',
    first_party: row.first_party,
    grants: grantsOf(m),
    audience: grantsOf(m).includes('client_credentials') ? (m.audience ?? ownAudience(row.client_id)) : null,
    redirect_uris: m.redirect_uris,
    post_logout_redirect_uris: m.post_logout_redirect_uris,
    allowed_groups: ids.map((id) => names.get(id) ?? `(deleted group ${id})`),
    allowed_group_ids: ids,
    two_factor: row.two_factor,
    // One stored before the rule refused a user and password is shown without them (the sender still uses it).
    backchannel_logout_uri: m.backchannel_logout_uri ? withoutUserinfo(m.backchannel_logout_uri) : null,
    id_token_claims: m.id_token_claims ?? [],
    created_at: iso(row.created_at),
  };
}

/** The client rows a server (its Services) keeps for the token endpoint, by client id (oidc/support.ts). */
const clientRows = new WeakMap<Services, Map<string, OidcClientRow>>();

export const rowsOf = (s: Services): Map<string, OidcClientRow> => clientRows.get(s) ?? clientRows.set(s, new Map()).get(s)!;

/** Drops this server's copy of a client's row (it was removed or changed here; other servers confirm theirs per request). */
export function forgetClient(s: Services, clientId: string): void {
  rowsOf(s).delete(clientId);
}

/** The provider's view of a client's row (oidc-provider metadata). */
export async function metadataOf(s: Services, row: OidcClientRow): Promise<Record<string, unknown>> {
  const m = JSON.parse(row.metadata) as Metadata;
  return {
    client_id: row.client_id,
    client_name: row.name,
    ...(row.client_secret ? { client_secret: row.client_secret } : {}),
    redirect_uris: m.redirect_uris,
    post_logout_redirect_uris: m.post_logout_redirect_uris,
    token_endpoint_auth_method: m.token_endpoint_auth_method,
    // ID tokens follow the signing key's algorithm: after `keys rotate --alg ES256` and the old
    // RSA key's retirement there may be no RS256 key left to sign with. Relying parties read the
    // algorithms from discovery (id_token_signing_alg_values_supported lists both).
    // The provider's own keys (privateJwks) and this come from the same load of the key ring.
    id_token_signed_response_alg: s.keys.signingAlg(),
    grant_types: grantTypes(grantsOf(m)),
    response_types: grantsOf(m).includes('authorization_code') ? ['code'] : [],
    // The audience of its client-credentials tokens (extraClientMetadata): read with the client,
    // so a token request reads the client's row once.
    ...(grantsOf(m).includes('client_credentials') ? { [AUDIENCE_METADATA]: m.audience ?? ownAudience(row.client_id) } : {}),
    // Its logout tokens name the session (sid), which its ID tokens carry too.
    ...(m.backchannel_logout_uri ? { backchannel_logout_uri: m.backchannel_logout_uri, backchannel_logout_session_required: true } : {}),
    // The claims its ID tokens carry (extraClientMetadata), read with the client as the audience is.
    ...(m.id_token_claims?.length ? { [ID_TOKEN_CLAIMS_METADATA]: idTokenClaimsOf(m.id_token_claims) } : {}),
  };
}

const sameResource = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** 256 random bits, base64url, never starting with '-' (a shell, or curl's -u, would read it as an option). */
export const newClientSecret = (): string => newShellSafeId(32);

/** 96 random bits, base64url, never starting with '-' or '_' (the shell would read it as an option). */
export const newClientId = (): string => newShellSafeId(12);

/**
 * A client id given by an operator (a configuration file's fixed ids): 1 to 64 letters, digits,
 * '.', '_' and '-', starting with a letter or digit. Nothing that needs escaping in a URL, in
 * HTTP Basic credentials or in the shell, and never read as an option.
 */
export function parseClientId(raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(raw)) {
    throw new AppError('invalid_input', 'a client_id must be 1 to 64 letters, digits, ".", "_" and "-", starting with a letter or digit');
  }
  return raw;
}

/** The row a client would be stored as. */
export type ClientRowInput = Omit<OidcClientRow, 'created_at'>;

/**
 * The row a client would be stored as, every rule checked, nothing written: addClient stores it
 * with a new id and secret, a configuration file with its own (`secret` null: a public client).
 * Its gate's groups are looked up through `tx` (a file's groups are made in its transaction).
 */
export async function clientRowFor(s: Services, tx: Tx, clientId: string, input: NewClient, secret: string | null): Promise<ClientRowInput> {
  const name = input.name.trim();
  if (name === '' || name.length > 100) throw new AppError('invalid_input', '{--name} must be 1 to 100 characters');
  if ((secret === null) !== (input.public === true)) throw new AppError('invalid_input', 'a public client has no secret; any other needs one');
  const grants: ClientGrant[] = [];
  if (input.redirectUris.length > 0) grants.push('authorization_code');
  if (input.device) grants.push('device_code');
  if (input.credentials) grants.push('client_credentials');
  if (grants.length === 0) throw new AppError('invalid_input', 'give at least one {--redirect-uri}, or {--device}, or {--credentials}');
  if (input.credentials && input.public) throw new AppError('invalid_input', '{--credentials} needs a secret: a public client cannot act as itself');
  if (input.audience !== undefined && !input.credentials) throw new AppError('invalid_input', '{--audience} is for {--credentials} clients');
  if (input.postLogoutRedirectUris?.length && !grants.includes('authorization_code')) {
    throw new AppError('invalid_input', '{--post-logout-redirect-uri} needs {--redirect-uri}: only a browser sign-in signs out');
  }
  if (input.backchannelLogoutUri !== undefined && !grants.includes('authorization_code')) {
    throw new AppError('invalid_input', '{--backchannel-logout-uri} needs {--redirect-uri}: only a browser sign-in has a session to end');
  }
  if (input.twoFactor && !grants.includes('authorization_code')) {
    throw new AppError('invalid_input', '{--two-factor} needs {--redirect-uri}: only a browser sign-in can be asked for a second factor');
  }
  const idTokenClaims = parseIdTokenClaims(input.idTokenClaims ?? []);
  if (idTokenClaims.length > 0 && !grants.includes('authorization_code') && !grants.includes('device_code')) {
    throw new AppError('invalid_input', '{--id-token-claims} needs {--redirect-uri} or {--device}: only a person signing in gets an ID token');
  }
  const audience = input.audience === undefined ? undefined : audienceOf(input.audience.trim());
  const logoutTo = input.backchannelLogoutUri === undefined ? undefined : await logoutUri(s, input.backchannelLogoutUri);
  // Gatehouse's own access tokens carry its public URL as their audience: a client's tokens for
  // the same audience would pass for a person's at a resource server that checks only aud.
  if (audience !== undefined && s.config.publicUrl && sameResource(audience, s.config.publicUrl)) {
    throw new AppError('invalid_input', `{--audience} must not be Gatehouse's own URL (${s.config.publicUrl}): its own tokens carry it`);
  }
  const metadata: Metadata = {
    redirect_uris: input.redirectUris.map((u) => redirectUri(u, '{--redirect-uri}')),
    post_logout_redirect_uris: (input.postLogoutRedirectUris ?? []).map((u) => redirectUri(u, '{--post-logout-redirect-uri}')),
    token_endpoint_auth_method: input.public ? 'none' : 'client_secret_basic',
    grants,
    ...(audience === undefined ? {} : { audience }),
    ...(logoutTo === undefined ? {} : { backchannel_logout_uri: logoutTo }),
    ...(idTokenClaims.length === 0 ? {} : { id_token_claims: idTokenClaims }),
  };
  const groups: string[] = [];
  for (const g of input.allowedGroups ?? []) groups.push((await resolveGateGroup(tx, g)).reference_id);
  return {
    client_id: clientId,
    name,
    metadata: JSON.stringify(metadata),
    client_secret: secret,
    first_party: input.firstParty === true,
    allowed_groups: JSON.stringify(groups),
    two_factor: input.twoFactor === true,
  };
}

export async function addClient(s: Services, actor: Actor, input: NewClient): Promise<ClientView & { client_secret?: string }> {
  const secret = input.public ? null : newClientSecret();
  const row = await clientRowFor(s, s.store.root, newClientId(), input, secret);
  await insertClient(s.store.root, row);
  await s.audit.record('client_added', actor, { account: null, client_id: row.client_id, name: row.name });
  const view = await clientView(s, (await findClient(s.store.root, row.client_id))!);
  return secret ? { ...view, client_secret: secret } : view;
}

/** Changes whether a client needs two factors and where its sessions' ends are told. */
export async function changeClient(s: Services, actor: Actor, clientId: string, changes: ClientChanges): Promise<ClientView> {
  // The address is checked (a DNS answer, maybe) before the transaction, which so holds the lock
  // through no wait on the network; a refusal of it is said after the checks below, as it always was.
  const logoutTo = changes.backchannelLogoutUri
    ? await logoutUri(s, changes.backchannelLogoutUri).then(
        (uri) => ({ uri }),
        (err: unknown) => ({ err }),
      )
    : { uri: changes.backchannelLogoutUri };
  const idTokenClaims = changes.idTokenClaims === undefined ? undefined : parseIdTokenClaims(changes.idTokenClaims);
  // The client is read, checked and written in one transaction under the accounts lock (as every
  // apply and removal is): a change, a removal or an apply at the same moment comes wholly before
  // or after this one, so metadata read before another change is never written back over it.
  const changed = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const row = await findClient(tx, clientId);
    if (!row) throw new AppError('not_found', `no client ${clientId.slice(0, 64)}`);
    await assertNotManaged(tx, actor.via, { kind: 'oidc_client', name: clientId });
    if (changes.twoFactor === undefined && changes.backchannelLogoutUri === undefined && changes.idTokenClaims === undefined) {
      throw new AppError(
        'invalid_input',
        'say what to change: {--two-factor} on|off, {--backchannel-logout-uri} URL (or ""), {--id-token-claims} CLAIM,… (or "")',
      );
    }
    const m = JSON.parse(row.metadata) as Metadata;
    const browser = grantsOf(m).includes('authorization_code');
    if (!browser && (changes.twoFactor || changes.backchannelLogoutUri)) {
      throw new AppError('invalid_input', 'this client has no browser sign-in ({--redirect-uri}): it has no session to ask more of or to end');
    }
    if (idTokenClaims?.length && !browser && !grantsOf(m).includes('device_code')) {
      throw new AppError('invalid_input', 'this client has no browser or device sign-in: it gets no ID token to put claims in');
    }
    if ('err' in logoutTo) throw logoutTo.err;
    let next: Metadata = m;
    if (logoutTo.uri !== undefined) {
      const { backchannel_logout_uri: _old, ...rest } = next;
      next = logoutTo.uri === '' ? rest : { ...rest, backchannel_logout_uri: logoutTo.uri };
    }
    if (idTokenClaims !== undefined) {
      const { id_token_claims: _old, ...rest } = next;
      next = idTokenClaims.length === 0 ? rest : { ...rest, id_token_claims: idTokenClaims };
    }
    if (next !== m) await updateClient(tx, clientId, { metadata: JSON.stringify(next) });
    if (changes.twoFactor !== undefined) await updateClient(tx, clientId, { two_factor: changes.twoFactor });
    // The client as this change left it: a removal right after must not turn a change made into a "not found".
    return clientView(s, (await findClient(tx, clientId))!, tx);
  });
  forgetClient(s, clientId);
  await s.audit.record('client_changed', actor, {
    account: null,
    client_id: clientId,
    ...(changes.twoFactor === undefined ? {} : { two_factor: changes.twoFactor ? 'on' : 'off' }),
    ...(changes.backchannelLogoutUri === undefined ? {} : { backchannel_logout: changes.backchannelLogoutUri === '' ? 'off' : 'on' }),
    ...(idTokenClaims === undefined ? {} : { id_token_claims: idTokenClaims.join(',') || 'none' }),
  });
  return changed;
}

/**
 * A back-channel logout URI: the rule of every address Gatehouse sends to (outboundUrl: no user or
 * password, which `client show` and `config export` would print), where a browser's redirect
 * would be allowed to go (https, or http on localhost), no longer than a URL should be, and, as
 * for webhooks, not inside the network unless the operator allows it (the sender checks again at
 * every try).
 */
async function logoutUri(s: Services, raw: string): Promise<string> {
  const field = '{--backchannel-logout-uri}';
  if (raw.length > 500) throw new AppError('invalid_input', `${field} must be at most 500 characters`);
  // Kept as a URL parser writes it: what is shown is what is dialled.
  const uri = outboundUrl(raw.trim(), field, {
    example: 'https://app.example.com/backchannel-logout',
    proof: "the app checks the logout token's signature instead",
  }).href;
  redirectUri(uri, field);
  await checkTargetUrl(new URL(uri), targetPolicy(s.config.webhookAllowPrivate), field);
  return uri;
}

export async function showClient(s: Services, clientId: string): Promise<ClientView> {
  const row = await findClient(s.store.root, clientId);
  if (!row) throw new AppError('not_found', `no client ${clientId.slice(0, 64)}`);
  return clientView(s, row);
}

export async function listClientViews(s: Services): Promise<ClientView[]> {
  return Promise.all((await listClients(s.store.root)).map((row) => clientView(s, row)));
}

export async function removeClient(s: Services, actor: Actor, clientId: string): Promise<ClientView> {
  const view = await showClient(s, clientId);
  // Decided by the delete, not by the read above: of two removals at once, one removes it.
  const removed = await unlessManaged(s.store, actor.via, 'oidc_client', clientId, (tx) => deleteClient(tx, clientId));
  if (!removed) throw new AppError('not_found', `no client ${clientId.slice(0, 64)}`);
  forgetClient(s, clientId);
  await s.audit.record('client_removed', actor, { account: null, client_id: clientId });
  return view;
}

export async function rotateClientSecret(s: Services, actor: Actor, clientId: string): Promise<{ client_id: string; client_secret: string }> {
  const view = await showClient(s, clientId);
  if (view.public) throw new AppError('invalid_input', 'a public client has no secret');
  const secret = newClientSecret();
  await unlessManaged(s.store, actor.via, 'oidc_client', clientId, (tx) => setClientSecret(tx, clientId, secret));
  forgetClient(s, clientId);
  await s.audit.record('client_secret_rotated', actor, { account: null, client_id: clientId });
  return { client_id: clientId, client_secret: secret };
}
