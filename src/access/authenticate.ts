/**
 * Bearer token (http/caller.ts takes it out of the Authorization header) → Principal. No credentials makes a guest; a token that is present but not
 * valid (bad signature, expired, stale auth_version, account gone or disabled) is refused, never
 * downgraded to a guest.
 */
import type { Services } from '../services';
import { GUEST, Guarded, Principal } from '../permission/check';
import { readRequestFacts, readRequestFactsWith, type RequestFacts, type Ride } from '../store/request-facts';
import { invalidToken, type Verified } from '../auth/tokens';
import { isApiKey } from '../auth/api-keys';
import { verifyApiKey } from './api-keys';
import type { Presented } from './presented';
import { touchSession } from '../store/sessions';

/**
 * How stale a session's "last used" may be before a request moves it: a request writes nothing,
 * except the first of a session in each interval (one conditional write, so two instances or
 * requests at once move it once). Refreshes move it too.
 */
export const SESSION_TOUCH_MS = 5 * 60_000;

/** The session's "last used" moved when it is older than the interval (after the request was allowed). */
async function seen(s: Services, presented: Presented | null, facts: RequestFacts): Promise<void> {
  const last = facts.account?.sessionLastUsed ?? null;
  if (presented?.sid == null || last === null) return;
  const before = s.clock.now() - SESSION_TOUCH_MS;
  if (last < before) await touchSession(s.store.root, presented.sid, before);
}

/**
 * The caller, and (when `table` is given) that record type's table permission, read together in
 * one round trip: the record API's hot path.
 */
export async function authenticate(
  s: Services,
  token: string | null,
  table: string | null = null,
): Promise<{ principal: Principal; table?: Guarded; session: string | null }> {
  const presented = token === null ? null : await verifyBearer(s, token);
  const facts = await factsFor(s, presented, table);
  const decided = decide(presented, facts);
  await seen(s, presented, facts);
  return decided;
}

/** One Presented per verified token (the token cache gives one Verified per token): a stable key for the hint below. */
const presentedOf = new WeakMap<Verified, Presented>();

function fromToken(verified: Verified): Presented {
  let p = presentedOf.get(verified);
  if (!p) {
    p = { referenceId: verified.claims.sub, authVersion: verified.claims.auth_version, sid: verified.claims.sid ?? null, kid: verified.kid };
    presentedOf.set(verified, p);
  }
  return p;
}

/** A bearer token on the HTTP API: an access token (JWT), or an API key (`gh_…`) acting as its account. */
async function verifyBearer(s: Services, token: string): Promise<Presented> {
  return isApiKey(token) ? verifyApiKey(s.store.root, s.clock, token) : fromToken(await s.tokens.verify(token));
}

/** The principal a verified token had at its previous request: a hint, never an answer. */
const lastPrincipal = new WeakMap<Presented, Principal>();

/**
 * authenticate(), with a read that depends on who the caller is (a list filtered by what they
 * may read) started alongside the token's store check instead of after it: one round trip of
 * waiting, not two. The read starts with the principal the token had at its previous request (a
 * guest is always a guest); it is kept only if the store check gives the same principal again,
 * and run afresh otherwise. An invalid token is refused whatever the read gave.
 */
export async function authenticateWith<T>(
  s: Services,
  token: string | null,
  table: string | null,
  read: (principal: Principal) => Promise<T>,
): Promise<{ principal: Principal; table?: Guarded; session: string | null; value: T }> {
  const presented = token === null ? null : await verifyBearer(s, token);
  const hint = presented === null ? GUEST : lastPrincipal.get(presented);
  const early =
    hint === undefined
      ? null
      : read(hint).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
  const facts = await factsFor(s, presented, table);
  const result = decide(presented, facts);
  await seen(s, presented, facts);
  if (presented !== null) lastPrincipal.set(presented, result.principal);
  if (early === null || !samePrincipal(hint!, result.principal)) return { ...result, value: await read(result.principal) };
  const settled = await early;
  if ('error' in settled) throw settled.error;
  return { ...result, value: settled.value };
}

/**
 * authenticate(), with a read made in the same statement as the token's store check: one round
 * trip instead of two. The read may be keyed by who the token names (its account and session,
 * from the verified claims, before the store is asked: forward authentication) or not at all (a
 * row by id: PostgreSQL's get). The read is believed only together with
 * the check's answer (an invalid token is refused whatever the read gave).
 */
export async function authenticateRiding<T>(
  s: Services,
  token: string | null,
  ride: (subject: { referenceId: string; sid: string | null } | null) => Ride<T>,
  o: { apiKeys: boolean },
): Promise<{ principal: Principal; session: string | null; value: T }> {
  // Where API keys are no way in (forward authentication guards apps for people), one is refused
  // as any invalid token is.
  if (token !== null && isApiKey(token) && !o.apiKeys) throw invalidToken();
  const presented = token === null ? null : await verifyBearer(s, token);
  const { facts, value } = await readRequestFactsWith(
    s.store.root,
    presented,
    null,
    ride(presented && { referenceId: presented.referenceId, sid: presented.sid }),
  );
  const { principal, session } = decide(presented, facts);
  await seen(s, presented, facts);
  return { principal, session, value };
}

function factsFor(s: Services, presented: Presented | null, table: string | null) {
  return readRequestFacts(s.store.root, presented, table);
}

function decide(presented: Presented | null, facts: RequestFacts): { principal: Principal; table?: Guarded; session: string | null } {
  if (presented === null) return { principal: GUEST, table: facts.table, session: null };
  // Checked against the store on every request: no cache may outlive a revocation.
  const account = facts.account;
  if (!account || account.disabled || !account.keyValid || !account.sessionValid || account.authVersion !== presented.authVersion)
    throw invalidToken(presented.apiKey ? 'api_key' : 'access_token');
  // A recovery link's session is no administrator's, whoever's it is (permission/check.ts).
  const principal: Principal = account.sessionRecovery
    ? { accountId: account.id, referenceId: account.referenceId, groupIds: account.groupIds, isAdmin: false, recovering: true }
    : { accountId: account.id, referenceId: account.referenceId, groupIds: account.groupIds, isAdmin: account.isAdmin };
  return { principal, table: facts.table, session: presented.sid };
}

function samePrincipal(a: Principal, b: Principal): boolean {
  if (a.accountId !== b.accountId || a.isAdmin !== b.isAdmin || a.recovering !== b.recovering || a.groupIds.size !== b.groupIds.size) return false;
  for (const g of a.groupIds) if (!b.groupIds.has(g)) return false;
  return true;
}
