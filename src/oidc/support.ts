/**
 * What the OpenID Connect provider needs from the core: storage for its models (one table,
 * shared by every instance), clients from the store, an account's claims, and whether an account
 * may sign in to a client (--allowed-group). Payloads that name an account die with its
 * auth_version or when it is disabled (store/oidc.ts findPayload).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Services } from '../services';
import { grantExists } from '../store/connected-apps';
import {
  accountFacts,
  type AccountFacts,
  consumePayload,
  destroyPayload,
  findClient,
  findGrantWithFacts,
  findPayload,
  findPayloadWithGrant,
  type OidcClientRow,
  type OidcPayloadRow,
  revokeGrant,
  revokeReusedGrant,
  upsertPayload,
} from '../store/oidc';
import { passesGate } from '../groups/manage';
import { findSession } from '../store/sessions';
import type { Actor } from '../actor';
import { AppError } from '../errors';
import { metadataOf, rowsOf } from './clients';
import { type AccountClaims, claimsFrom } from '../accounts/claims';
import { acrOf, amrOf } from '../accounts/assurance';
import { stillAnswers } from '../accounts/app-answer';

export interface ProviderAdapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void>;
  find(id: string): Promise<Record<string, unknown> | undefined>;
  findByUserCode(code: string): Promise<Record<string, unknown> | undefined>;
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * Clients at the token endpoint come from memory: a client's row changes rarely, and every token
 * request would otherwise read it (twice: to authenticate the client, and for its allowed groups).
 * A row served from memory is confirmed by a statement the request runs anyway (the grant's, or
 * the account's claims, which read the client's row beside them), or, where none runs, by a read
 * of its own before the answer: a client removed, or its secret or settings changed, on any
 * instance is refused at once on every other.
 */
interface TokenRequest {
  /** Rows served from memory in this request, by client id. */
  served: Map<string, OidcClientRow>;
  /** Clients whose served row a statement of this request found unchanged. */
  confirmed: Set<string>;
  /** What the grant's statement read of its account and client, by grant id. */
  grants: Map<string, { account: string | null; clientId: string | null; facts: AccountFacts }>;
  /** The request's writes, handed to the group commit without waiting; all durable before the answer. */
  writes: Promise<void>[];
  /** The grant of each code, refresh token or device code the request read, by `model:id`. */
  grantOf: Map<string, string>;
  /** Grants whose code or token this request found used by another request meanwhile. */
  reused: Set<string>;
  /** Grants read beside the code or refresh token that named them, not yet asked for, by id. */
  prefetched: Map<string, { grant: OidcPayloadRow; facts: AccountFacts }>;
}

/** How a token request ended: answered as the provider said, or refused after the fact. */
export type TokenRequestOutcome = 'answered' | 'stale_client' | 'reused';

/** The models whose payloads are used once (consumed), and so checked for reuse. */
const USED_ONCE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode']);

const tokenRequests = new AsyncLocalStorage<TokenRequest>();
const MAX_CACHED_CLIENTS = 1000;

/** Whether two reads of a client's row say the same of it. */
const sameClient = (a: OidcClientRow | undefined, b: OidcClientRow | undefined) =>
  a !== undefined &&
  b !== undefined &&
  a.client_secret === b.client_secret &&
  a.metadata === b.metadata &&
  a.allowed_groups === b.allowed_groups &&
  a.first_party === b.first_party &&
  a.name === b.name;

/**
 * Runs one token request (`fn`: the provider's handling of it), then confirms every client row it
 * was served from memory that nothing in it read again. `stale_client`: a served row is no longer
 * the client's (removed or changed meanwhile). `reused`: the code or refresh token it presented
 * was used by another request at the same moment; the grant has been ended (every token it issued,
 * this request's too). Either way the request must be refused.
 */
export async function inTokenRequest(s: Services, fn: () => Promise<void>): Promise<TokenRequestOutcome> {
  const request: TokenRequest = {
    served: new Map(),
    confirmed: new Set(),
    grants: new Map(),
    writes: [],
    grantOf: new Map(),
    reused: new Set(),
    prefetched: new Map(),
  };
  await tokenRequests.run(request, fn);
  // Nothing is answered before it is stored: the request's writes (a code consumed, a refresh
  // token rotated, the new tokens) went to the store together and are all durable now, or the
  // answer is an error.
  const failed = (await Promise.allSettled(request.writes)).find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  // After this request's own tokens are stored, so that they end with the grant too.
  for (const grantId of request.reused) await revokeReusedGrant(s.store.root, grantId);
  if (request.reused.size > 0) return 'reused';
  // A grant ended meanwhile (revoked from the account's page, or by another request's reuse, on
  // any instance): gone now that this request's writes are stored, so what they stored (a rotated
  // refresh token, new access tokens) is removed with it and no token of it stays alive; a
  // revocation committed later removes them itself. (The answer stands: what it carries no longer
  // works, as when a reuse ends the grant after the winner's answer.)
  for (const grantId of new Set([...request.grants.keys(), ...request.grantOf.values()])) {
    if (!(await grantExists(s.store.root, grantId))) await revokeReusedGrant(s.store.root, grantId);
  }
  let current = true;
  for (const clientId of request.served.keys()) {
    if (request.confirmed.has(clientId)) continue;
    if (!confirm(s, request, clientId, await findClient(s.store.root, clientId))) current = false;
  }
  return current ? 'answered' : 'stale_client';
}

/**
 * Marks a code, refresh token or device code used. The provider checked `consumed` when it read
 * it, but another request may have read it at the same moment: the conditional write decides, and
 * the request that loses is refused after the fact (inTokenRequest), its grant ended.
 */
function consume(s: Services, model: string, id: string): Promise<void> {
  const request = tokenRequests.getStore();
  // The grant a lost claim ends with it, in its transaction (ended again after the request, with
  // whatever this request wrote meanwhile).
  const decided = consumePayload(s.store.root, model, id, request?.grantOf.get(`${model}:${id}`)).then((won) => {
    if (won) return;
    const grantId = request?.grantOf.get(`${model}:${id}`);
    // No grant to end (outside a token request, or a payload without one): refused as server_error.
    if (!grantId) throw new AppError('conflict', 'already used');
    request!.reused.add(grantId);
  });
  return request ? write(decided) : decided;
}

/** Checks a fresh read of a client's row against the one served in this request; keeps the fresh one. */
function confirm(s: Services, request: TokenRequest | undefined, clientId: string, fresh: OidcClientRow | undefined): boolean {
  const rows = rowsOf(s);
  if (fresh) rows.set(clientId, fresh);
  else rows.delete(clientId);
  const served = request?.served.get(clientId);
  if (!served) return fresh !== undefined;
  if (!sameClient(served, fresh)) return false;
  request!.confirmed.add(clientId);
  return true;
}

/** A client's row: from memory inside a token request (confirmed later), else from the store. */
async function clientRow(s: Services, clientId: string): Promise<OidcClientRow | undefined> {
  const request = tokenRequests.getStore();
  if (!request) return findClient(s.store.root, clientId);
  const rows = rowsOf(s);
  let row = rows.get(clientId);
  if (!row) {
    row = await findClient(s.store.root, clientId);
    if (!row) return undefined;
    if (rows.size >= MAX_CACHED_CLIENTS) rows.delete(rows.keys().next().value!);
    rows.set(clientId, row);
  }
  request.served.set(clientId, row);
  return row;
}

/**
 * A write of the provider's. In a token request it is handed to the group commit and not waited
 * for: the request's next write follows at once, so its writes share one transaction instead of
 * each waiting for its own (the provider reads none of them back in the same request).
 * inTokenRequest waits for them all before the answer. Elsewhere it is waited for here.
 */
function write(pending: Promise<void>): Promise<void> {
  const request = tokenRequests.getStore();
  if (!request) return pending;
  request.writes.push(pending);
  pending.catch(() => undefined); // its failure is reported by inTokenRequest, before the answer
  return Promise.resolve();
}

export function adapterFor(s: Services, model: string): ProviderAdapter {
  const live = (row: { payload: string; consumed_at: number | null } | undefined) =>
    row ? { ...(JSON.parse(row.payload) as Record<string, unknown>), ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at / 1000) } : {}) } : undefined;
  return {
    async upsert(id, payload, expiresIn) {
      if (model === 'Client') return; // clients come from the shell only
      const row = {
        model,
        id,
        payload: JSON.stringify(payload),
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        client_id: model === 'Grant' && typeof payload.clientId === 'string' ? payload.clientId : null,
        account: typeof payload.accountId === 'string' ? payload.accountId : null,
        expires_at: expiresIn ? s.clock.now() + expiresIn * 1000 : null,
        user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
      };
      await write(upsertPayload(s.store.root, row));
    },
    async find(id) {
      if (model === 'Client') {
        const row = await clientRow(s, id);
        return row ? metadataOf(s, row) : undefined;
      }
      // In a token request the grant's statement also reads its account's claims and its client.
      const request = model === 'Grant' ? tokenRequests.getStore() : undefined;
      if (request) {
        // Read already beside the code or refresh token this request presented, or read now.
        const prefetched = request.prefetched.get(id);
        request.prefetched.delete(id);
        const found = prefetched ?? (await findGrantWithFacts(s.store.root, id));
        if (found) request.grants.set(id, { account: found.grant.account, clientId: found.grant.client_id, facts: found.facts });
        return live(found?.grant);
      }
      const reading = USED_ONCE.has(model) ? tokenRequests.getStore() : undefined;
      if (reading && model !== 'DeviceCode') {
        // A code or refresh token: its grant (which the provider reads next) in the same statement.
        const found = await findPayloadWithGrant(s.store.root, model, id);
        if (found?.payload.grant_id) reading.grantOf.set(`${model}:${id}`, found.payload.grant_id);
        if (found?.grant) reading.prefetched.set(found.grant.grant.id, found.grant);
        return live(found?.payload);
      }
      const found = await findPayload(s.store.root, model, { id }, { expired: model === 'DeviceCode' });
      if (reading && found?.grant_id) reading.grantOf.set(`${model}:${id}`, found.grant_id);
      return live(found);
    },
    // An expired device code is still found (until pruned): the device is told expired_token, and
    // the person "that code has expired", not "unknown code".
    async findByUserCode(userCode) {
      return live(await findPayload(s.store.root, model, { userCode }, { expired: true }));
    },
    async findByUid(uid) {
      return live(await findPayload(s.store.root, model, { uid }));
    },
    consume: (id) => consume(s, model, id),
    // A device code cancelled by the person has no grant: polled again, the provider revokes "its"
    // grant, undefined; there is nothing to remove (it answered 500 before).
    destroy: async (id) => (id ? write(destroyPayload(s.store.root, model, id)) : undefined),
    revokeByGrantId: async (grantId) => (grantId ? write(revokeGrant(s.store.root, model, grantId)) : undefined),
  };
}

/** What the provider tells a client of a person: the one mapping every protocol uses (accounts/claims.ts). */
export type OidcClaims = AccountClaims;

/**
 * One use of a client's token: the grant the provider has just read in this request (if it did),
 * and the level (`acr`) the token recorded of the sign-in it was issued for (undefined: none).
 */
export interface TokenUse {
  grantId?: string;
  acr: string | undefined;
}

/**
 * The client's requirements, as they stand now, against one use of its tokens: what a token of
 * `clientId` may say of `sub` (its claims), or undefined when the client no longer takes it. The
 * one routine of every use (a code exchange, a refresh, userinfo, introspection), so that a
 * requirement that changes ends the access a grant gave at once, everywhere:
 * - the client is still registered (in a token request, with the row that authenticated it);
 * - the account is enabled;
 * - it is a member of the client's allowed groups;
 * - the sign-in the token was issued at is strong enough for the client (the rule of answering
 *   an app, accounts/app-answer.ts): a client switched to two factors since takes no token of a
 *   one-factor sign-in.
 * `use` absent: an authorization, not a token; its interaction asks for the second factor.
 * In a token request the grant's statement has read the account and the client already.
 */
export async function accountFor(s: Services, sub: string, clientId: string, use?: TokenUse): Promise<OidcClaims | undefined> {
  const request = tokenRequests.getStore();
  const read = use?.grantId ? request?.grants.get(use.grantId) : undefined;
  const facts = read && read.account === sub && read.clientId === clientId ? read.facts : await accountFacts(s.store.root, sub, clientId);
  // confirm() is false whenever the client's row is gone; the check below only narrows the type.
  if (!confirm(s, request, clientId, facts.client) || !facts.client) return undefined;
  const claims = claimsFrom(sub, facts.claims);
  if (!claims) return undefined;
  if (use && !(await stillAnswers(use.acr, { twoFactor: facts.client.two_factor }))) return undefined;
  if (!(await passesGate(s.store.root, sub, JSON.parse(facts.client.allowed_groups) as string[]))) return undefined;
  return claims;
}

/**
 * Whether the client skips consent, and whether `sub` may sign in to it: with allowed groups,
 * only members of those groups, named by id and counted only while managed (a group any account
 * could make or rename never opens a gate).
 */
export async function clientPolicy(s: Services, clientId: string, sub: string | null): Promise<ClientPolicy> {
  const client = await findClient(s.store.root, clientId);
  if (!client) return { firstParty: false, allowed: false, name: '', twoFactor: false };
  const allowedGroups = JSON.parse(client.allowed_groups) as string[];
  const allowed = await passesGate(s.store.root, sub, allowedGroups);
  return { firstParty: client.first_party, allowed, name: client.name, twoFactor: client.two_factor };
}

export interface ClientPolicy {
  firstParty: boolean;
  allowed: boolean;
  name: string;
  /** Its sign-ins need a second factor (step-up). */
  twoFactor: boolean;
}

/**
 * The account and sign-in time of a page session (the caller carries its live access token): the
 * provider's sessions follow the pages' session, so a sign-out or another person's sign-in on the
 * pages ends what the provider would otherwise still answer for.
 */
export async function pageSessionOf(s: Services, actor: Actor): Promise<PageSession | null> {
  if (actor.session === null || actor.principal.referenceId === null) return null;
  const session = await findSession(s.store.root, actor.session);
  // A recovery link's session is for adding a way in on /account, never a sign-in to an app.
  if (!session || session.ended_at !== null || session.method === 'recovery') return null;
  return {
    sub: actor.principal.referenceId,
    sessionId: session.id,
    authTime: Math.floor(session.authenticated_at / 1000),
    signedInAt: session.authenticated_at,
    amr: amrOf(session),
    acr: acrOf(session),
  };
}

/** The page session an OpenID Connect sign-in stands on: who, since when, and how (amr, RFC 8176). */
export interface PageSession {
  sub: string;
  /** Seconds, as auth_time says it. */
  authTime: number;
  /** The same instant in milliseconds: "signed in after this interaction asked" needs more than seconds. */
  signedInAt: number;
  amr: string[];
  acr: string;
  /** The Gatehouse session: the `sid` its ID tokens carry, and what ends it at the apps. */
  sessionId: string;
}
