/** Sessions and their refresh tokens (hashes only). */
import { op } from './handle';
import { decodeRow } from './schema';

export interface SessionRow {
  id: string;
  account_id: number;
  auth_version: number;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  ended_at: number | null;
  client: string | null;
  user_agent: string | null;
  /** The session passed a second factor (TOTP) when it opened. */
  two_factor: boolean;
  /** How it was signed in: a password (with or without TOTP), a passkey, or an upstream provider. */
  method: SigninMethod;
  /**
   * When the person last proved who they are in this session (a password, passkey or second
   * factor entered): the `auth_time` apps are told, and what a recent sign-in is measured from.
   */
  authenticated_at: number;
  /** The `amr` an upstream provider said of its own sign-in (JSON array), for method 'provider'. */
  upstream_amr: string | null;
  /** The second factor a password or provider session passed: a TOTP code, or a passkey (a passkey session's is the passkey itself). */
  second_factor: SecondFactor | null;
}

export type SecondFactor = 'otp' | 'hwk';

/** `mail`: a code mailed to the address; `recovery`: an administrator's recovery link (accounts/mail-signin.ts, recovery.ts). */
export type SigninMethod = 'password' | 'passkey' | 'provider' | 'mail' | 'recovery';

export interface RefreshRow {
  token_hash: string;
  session_id: string;
  created_at: number;
  spent_at: number | null;
}

export const insertSession = op(async (h, session: Omit<SessionRow, 'ended_at'>, refreshHash: string): Promise<void> => {
  await h.k('session').insert({ ...session, ended_at: null });
  await h.k('refresh_token').insert({ token_hash: refreshHash, session_id: session.id, created_at: session.created_at, spent_at: null });
});

/** A session by id (ended or not). */
export const findSession = op(async (h, id: string): Promise<SessionRow | undefined> => {
  const row = await h.k('session').where({ id }).first();
  return row ? decodeRow<SessionRow>('session', row) : undefined;
});

/**
 * The person proved who they are again in this open session (a password or second factor entered
 * again; `secondFactor` when it was a second factor): auth_time moves, and a second factor is kept.
 */
export const reauthenticated = op(async (h, sessionId: string, secondFactor: SecondFactor | null): Promise<boolean> => {
  const changes: Record<string, unknown> = { authenticated_at: h.clock.now() };
  if (secondFactor !== null) Object.assign(changes, { two_factor: true, second_factor: secondFactor });
  return (await h.k('session').where({ id: sessionId }).whereNull('ended_at').update(changes)) === 1;
});

/** A refresh token with its session. */
export const findRefresh = op(async (h, tokenHash: string): Promise<{ refresh: RefreshRow; session: SessionRow } | undefined> => {
  const refresh = await h.k('refresh_token').where({ token_hash: tokenHash }).first();
  if (!refresh) return undefined;
  const session = await h.k('session').where({ id: refresh.session_id }).first();
  return { refresh: decodeRow<RefreshRow>('refresh_token', refresh), session: decodeRow<SessionRow>('session', session) };
});

/** Spends a refresh token: true for the one caller that spent it, false if it was spent already. */
export const spendRefresh = op(async (h, tokenHash: string): Promise<boolean> => {
  return (await h.k('refresh_token').where({ token_hash: tokenHash }).whereNull('spent_at').update({ spent_at: h.clock.now() })) === 1;
});

/** The session's next refresh token; the session was used now. */
export const addRefresh = op(async (h, sessionId: string, tokenHash: string): Promise<void> => {
  const now = h.clock.now();
  await h.k('refresh_token').insert({ token_hash: tokenHash, session_id: sessionId, created_at: now, spent_at: null });
  await h.k('session').where({ id: sessionId }).update({ last_used_at: now });
});

/**
 * The session was seen now: "last used" moves, unless it moved since `before` (one conditional
 * write, at most once per interval per session whatever the number of requests or instances).
 */
export const touchSession = op(async (h, sessionId: string, before: number): Promise<void> => {
  const now = h.clock.now();
  await h.batch((b) => b.run('UPDATE session SET last_used_at = ? WHERE id = ? AND last_used_at < ? AND ended_at IS NULL', [now, sessionId, before]));
});

/**
 * Ends one session (of this account); false if there was no such open session. Through
 * accounts/session-ends.ts only, which tells the clients it signed in to.
 */
export const endSession = op(
  async (h, accountId: number, sessionId: string): Promise<boolean> =>
    (await h.k('session').where({ id: sessionId, account_id: accountId }).whereNull('ended_at').update({ ended_at: h.clock.now() })) === 1,
);

/** The account's open sessions (not ended, not expired, not idle, of its current auth_version), newest first. */
export const openSessions = op(async (h, accountId: number, idleMs: number): Promise<SessionRow[]> => {
  const now = h.clock.now();
  const rows = await h.all(
    `SELECT s.* FROM session s JOIN user_account a ON a.id = s.account_id
     WHERE s.account_id = ? AND s.ended_at IS NULL AND s.expires_at > ? AND s.last_used_at > ? AND s.auth_version = a.auth_version
     ORDER BY s.last_used_at DESC, s.id`,
    [accountId, now, now - idleMs],
  );
  return rows.map((r) => decodeRow<SessionRow>('session', r));
});

/** Drops sessions that ended, expired or idled out more than `keepMs` ago (their refresh tokens go with them). */
export const pruneSessions = op(async (h, idleMs: number, keepMs: number): Promise<void> => {
  const before = h.clock.now() - keepMs;
  await h
    .k('session')
    .where((q) =>
      q
        .where('ended_at', '<', before)
        .orWhere('expires_at', '<', before)
        .orWhere('last_used_at', '<', before - idleMs),
    )
    .del();
});
