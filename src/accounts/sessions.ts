/**
 * Sessions: every signin opens one; its access tokens carry its id (`sid`) and its refresh token
 * rotates on every use. A refresh token used twice ends the whole session (a stolen copy and the
 * real one cannot both go on), except within a few seconds of its spending, where two tabs of one
 * app racing each other are the likelier story: the loser is refused, the session lives on.
 * Sessions end after 30 days idle or 90 days in all, when signed out or revoked, and when the
 * account's auth_version moves (a password change ends every session).
 */
import { createHash, randomBytes } from 'node:crypto';
import { newShellSafeId } from '../auth/ids';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { AccountRow, findAccountById } from '../store/accounts';
import { endSession } from './session-ends';
import { describeDevice } from './devices';
import { amrOf } from './assurance';
import { checkTokenShape } from './one-time-tokens';
import { consumeToken } from '../store/account-tokens';
import { inOneTransaction } from '../store/handle';
import {
  addRefresh,
  findRefresh,
  findSession,
  insertSession,
  openSessions,
  SessionRow,
  type SecondFactor,
  type SigninMethod,
  spendRefresh,
} from '../store/sessions';

const DAY_MS = 24 * 60 * 60 * 1000;
export const SESSION_IDLE_MS = 30 * DAY_MS;
export const SESSION_ABSOLUTE_MS = 90 * DAY_MS;
/** A second use of a refresh token this soon after the first is a race, not a theft. */
export const REFRESH_RACE_MS = 10_000;

const hash = (token: string) => createHash('sha256').update(token).digest('hex');
const newRefreshToken = () => randomBytes(32).toString('base64url');
const invalidRefresh = () => new AppError('invalid_token', 'the refresh token is not valid; sign in again');

export interface Issued {
  sessionId: string;
  token: string;
  refreshToken: string;
}

async function sign(s: Services, account: AccountRow, sessionId: string, sessionEndsAt: number): Promise<string> {
  return s.tokens.sign({
    referenceId: account.reference_id,
    email: account.email,
    name: account.name,
    authVersion: account.auth_version,
    sessionId,
    sessionEndsAt,
  });
}

/**
 * How a session was opened: the facts every protocol reads of it (accounts/assurance.ts: amr, acr,
 * SAML's AuthnContextClassRef, forward authentication's two-factor rule). Made in two places only:
 * signinFacts (a sign-in's way and the second factor it passed) and carriedFacts (a session opened
 * from a signed-in one, as after a password change).
 */
export interface SessionFacts {
  method: SigninMethod;
  /** It stands on two factors: a second factor checked here, or a passkey that verified its user. */
  twoFactor: boolean;
  /** The second factor a password or provider sign-in passed (a passkey's session has none of its own). */
  secondFactor: SecondFactor | null;
  /** An upstream provider's own amr for its sign-in (method 'provider'); kept, at most ten values. */
  upstreamAmr: readonly string[];
  /** When the person last proved who they are (auth_time): now, unless said. */
  authenticatedAt?: number;
  /** A session that ends sooner than a sign-in's (a recovery link's: 15 minutes). */
  lifetimeMs?: number;
}

/**
 * A sign-in's facts: its way (method, the provider's own amr) and how its second factor was met:
 * `proved` by the way itself (a passkey with user verification), a code checked now (`otp`; a
 * recovery code counts as the code it stands in for), or none.
 */
export const signinFacts = (way: { method: SigninMethod; upstreamAmr?: readonly string[] }, passed: 'proved' | 'otp' | null): SessionFacts => ({
  method: way.method,
  twoFactor: passed !== null,
  secondFactor: passed === 'otp' && way.method !== 'passkey' ? 'otp' : null,
  upstreamAmr: way.upstreamAmr ?? [],
});

/**
 * The facts of a session opened from a signed-in one (a password, email or TOTP change ends every
 * session and opens this one): the caller's session's way, its provider's amr and its second
 * factor, kept. `twoFactor` given: the change just made the session two-factor (TOTP turned on,
 * its code checked) or one-factor (TOTP turned off). No session (an API key, the shell): a
 * password's.
 */
export function carriedFacts(current: SessionRow | undefined, twoFactor?: boolean): SessionFacts {
  const method = current?.method ?? 'password';
  if (twoFactor !== undefined) return { method, twoFactor, secondFactor: twoFactor && method !== 'passkey' ? 'otp' : null, upstreamAmr: keptAmr(current) };
  return { method, twoFactor: current?.two_factor ?? false, secondFactor: current?.second_factor ?? null, upstreamAmr: keptAmr(current) };
}

/** The provider's amr a session kept (its JSON list), as the list it was. */
function keptAmr(session: SessionRow | undefined): string[] {
  if (!session?.upstream_amr) return [];
  try {
    const values = JSON.parse(session.upstream_amr) as unknown;
    return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * THE session opener: every session (a sign-in's, whatever its way; one opened from a signed-in
 * session) is written here, from its facts, for `account` as it is now (its auth_version), with
 * its first token pair.
 */
export async function openSession(s: Services, actor: Actor, account: AccountRow, facts: SessionFacts): Promise<Issued> {
  const now = s.clock.now();
  const expiresAt = now + Math.min(facts.lifetimeMs ?? SESSION_ABSOLUTE_MS, SESSION_ABSOLUTE_MS);
  // Typed as `user revoke-session <email> <id>`: never starting with a dash.
  const sessionId = newShellSafeId(16);
  const refreshToken = newRefreshToken();
  await insertSession(
    s.store.root,
    {
      id: sessionId,
      account_id: account.id,
      auth_version: account.auth_version,
      created_at: now,
      last_used_at: now,
      expires_at: expiresAt,
      client: actor.client?.slice(0, 64) ?? null,
      user_agent: actor.userAgent?.slice(0, 200) ?? null,
      two_factor: facts.twoFactor,
      method: facts.method,
      authenticated_at: facts.authenticatedAt ?? now,
      upstream_amr: facts.method === 'provider' && facts.upstreamAmr.length ? JSON.stringify(facts.upstreamAmr.slice(0, 10)) : null,
      // A passkey's session is its own second factor; a one-factor session has none.
      second_factor: facts.twoFactor && facts.method !== 'passkey' ? (facts.secondFactor ?? 'otp') : null,
    },
    hash(refreshToken),
  );
  return { sessionId, token: await sign(s, account, sessionId, expiresAt), refreshToken };
}

/** A session opened from the caller's own (after a change that ended its sessions): its facts carried (carriedFacts). */
export async function reopenSession(s: Services, actor: Actor, account: AccountRow, twoFactor?: boolean): Promise<Issued> {
  const current = actor.session ? await findSession(s.store.root, actor.session) : undefined;
  const facts = carriedFacts(current, twoFactor);
  // A recovery link's session, carried (a password set in it): it still ends when the link's 15 minutes do.
  if (current?.method === 'recovery') facts.lifetimeMs = Math.max(1000, current.expires_at - s.clock.now());
  return openSession(s, actor, account, facts);
}

function sessionLive(session: SessionRow, account: AccountRow | undefined, now: number): account is AccountRow {
  return (
    account !== undefined &&
    !account.disabled &&
    session.ended_at === null &&
    session.expires_at > now &&
    session.last_used_at + SESSION_IDLE_MS > now &&
    session.auth_version === account.auth_version
  );
}

/** A new pair for a refresh token; a spent one ends its session (401 either way). */
export async function refreshSession(s: Services, actor: Actor, refreshToken: string): Promise<{ account: AccountRow } & Issued> {
  const tokenHash = hash(refreshToken);
  const outcome = await s.store.transaction(async (tx) => {
    // Spend first: the write takes SQLite's write lock at once (a later read→write upgrade would
    // fail with SQLITE_BUSY when another instance refreshes too), a row lock on PostgreSQL.
    const spent = await spendRefresh(tx, tokenHash);
    const found = await findRefresh(tx, tokenHash);
    if (!found) return { kind: 'unknown' as const };
    const { refresh, session } = found;
    const account = await findAccountById(tx, session.account_id);
    const now = s.clock.now();
    if (!sessionLive(session, account, now)) return { kind: 'ended' as const };
    if (!spent) {
      if (now - refresh.spent_at! <= REFRESH_RACE_MS) return { kind: 'raced' as const };
      await endSession(tx, session.account_id, session.id);
      return { kind: 'reused' as const, account: account.reference_id, session: session.id };
    }
    const next = newRefreshToken();
    await addRefresh(tx, session.id, hash(next));
    return { kind: 'ok' as const, account, sessionId: session.id, endsAt: session.expires_at, refreshToken: next };
  });
  if (outcome.kind === 'reused') {
    await s.audit.record('refresh_token_reused', actor, { account: outcome.account, session: outcome.session }, 'warn');
  }
  if (outcome.kind !== 'ok') throw invalidRefresh();
  return {
    account: outcome.account,
    sessionId: outcome.sessionId,
    token: await sign(s, outcome.account, outcome.sessionId, outcome.endsAt),
    refreshToken: outcome.refreshToken,
  };
}

export interface SessionView {
  id: string;
  /** When it was signed in. */
  created_at: string;
  /** When it was last seen (a request moves it at most every few minutes, a refresh always). */
  last_used_at: string;
  client: string | null;
  user_agent: string | null;
  current: boolean;
  /** The browser and system its User-Agent names ("Firefox on Windows"), or what it says of itself. */
  device: string;
  browser: string | null;
  system: string | null;
  /** How it was signed in (RFC 8176: pwd, otp, hwk, fed, mfa). */
  amr: string[];
}

export async function listSessions(s: Services, accountId: number, currentSession: string | null): Promise<SessionView[]> {
  const rows = await openSessions(s.store.root, accountId, SESSION_IDLE_MS);
  return Promise.all(
    rows.map(async (r) => {
      const d = await describeDevice(r.user_agent);
      return {
        id: r.id,
        created_at: new Date(r.created_at).toISOString(),
        last_used_at: new Date(r.last_used_at).toISOString(),
        client: r.client,
        user_agent: r.user_agent,
        current: r.id === currentSession,
        device: d.label,
        browser: d.browser,
        system: d.system,
        amr: amrOf(r),
      };
    }),
  );
}

/**
 * Ends every open session of the account but `keep` (the caller's own), each told to the apps it
 * signed in to, in one transaction; answers how many ended.
 */
export async function signoutOthers(s: Services, actor: Actor, account: AccountRow, keep: string): Promise<number> {
  const ended = await inOneTransaction(s.store.root, async (tx) => {
    let n = 0;
    for (const r of await openSessions(tx, account.id, SESSION_IDLE_MS)) if (r.id !== keep && (await endSession(tx, account.id, r.id))) n++;
    return n;
  });
  if (ended > 0) s.sender.nudge();
  await s.audit.record('other_sessions_revoked', actor, { account: account.reference_id, session: keep, ended });
  return ended;
}

/**
 * The new-sign-in mail's link: ends the one session its token is bound to (accounts/new-signin.ts),
 * once. Nothing else: no sign-in, no other session.
 */
export async function endSessionByLink(s: Services, actor: Actor, token: string): Promise<void> {
  checkTokenShape(token, 'end_session');
  const result = await consumeToken(s.store.root, token, 'end_session');
  if (!result.ok) {
    if (result.reason === 'expired') throw new AppError('token_expired', 'the sign-out link has expired; end the session from your account page');
    throw new AppError('token_invalid', 'the sign-out link is not valid or was already used');
  }
  const account = await findAccountById(s.store.root, result.accountId);
  if (!account || result.sessionId === null) throw new AppError('token_invalid', 'the sign-out link is not valid or was already used');
  // Ended already (signed out, expired): the link has done its work either way.
  if (await endSession(s.store.root, account.id, result.sessionId)) s.sender.nudge();
  await s.audit.record('session_ended_by_link', actor, { account: account.reference_id, session: result.sessionId });
}

/** Ends one of the account's sessions: its tokens are refused from the next request on. */
export async function revokeSession(
  s: Services,
  actor: Actor,
  accountId: number,
  sessionId: string,
  event: 'session_revoked' | 'signout' = 'session_revoked',
): Promise<void> {
  const account = await findAccountById(s.store.root, accountId);
  if (!account || !(await endSession(s.store.root, accountId, sessionId))) throw new AppError('not_found', 'no such open session');
  await s.audit.record(event, actor, { account: account.reference_id, session: sessionId });
}
