/**
 * Single-use account tokens (email verification, password reset): 256 random bits, stored only
 * as SHA-256 hashes, bound to the account and its email, expiring. Consuming is one atomic
 * UPDATE, so a token works once even when two requests race.
 */
import { createHash, randomBytes } from 'node:crypto';
import { op } from './handle';

export type TokenPurpose = 'verify_email' | 'reset_password' | 'unlock_signin' | 'recovery' | 'end_session';
/** Every purpose a row may have: the mailed ones, and a sign-in's second-factor step held for a browser (accounts/password-signin.ts). */
export type StoredPurpose = TokenPurpose | 'signin_step';

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** `sessionId`: the one session an end_session token may end (the new-sign-in mail's link). */
export const issueToken = op(async (h, accountId: number, purpose: TokenPurpose, emailKey: string, ttlSeconds: number, sessionId?: string): Promise<string> => {
  const token = randomBytes(32).toString('base64url');
  const now = h.clock.now();
  await h.k('account_token').insert({
    account_id: accountId,
    purpose,
    token_hash: hashOf(token),
    email_key: emailKey,
    expires_at: now + ttlSeconds * 1000,
    created_at: now,
    ...(sessionId === undefined ? {} : { session_id: sessionId }),
  });
  return token;
});

export type ConsumeResult = { ok: true; accountId: number; emailKey: string; sessionId: string | null } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export const consumeToken = op(async (h, token: string, purpose: StoredPurpose): Promise<ConsumeResult> => {
  const now = h.clock.now();
  const tokenHash = hashOf(token);
  const updated = await h
    .k('account_token')
    .where({ token_hash: tokenHash, purpose })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now });
  const row = await h.k('account_token').where({ token_hash: tokenHash, purpose }).first('account_id', 'email_key', 'used_at', 'expires_at', 'session_id');
  if (!row) return { ok: false, reason: 'unknown' };
  if (updated !== 1) return { ok: false, reason: Number(row.expires_at) <= now && row.used_at === null ? 'expired' : 'used' };
  return {
    ok: true,
    accountId: Number(row.account_id),
    emailKey: String(row.email_key),
    sessionId: row.session_id === null || row.session_id === undefined ? null : String(row.session_id),
  };
});

/**
 * Keeps a secret the caller made (a held sign-in step: its handle with what binds it to a browser),
 * as a row of `purpose` that consumeToken spends once.
 */
export const holdToken = op(async (h, accountId: number, purpose: 'signin_step', emailKey: string, secret: string, ttlMs: number): Promise<void> => {
  const now = h.clock.now();
  await h
    .k('account_token')
    .insert({ account_id: accountId, purpose, token_hash: hashOf(secret), email_key: emailKey, expires_at: now + ttlMs, created_at: now });
});

/** A spent held step made live again (its code was mistyped): the same row, until it expires. */
export const restoreToken = op(async (h, secret: string, purpose: 'signin_step'): Promise<void> => {
  await h
    .k('account_token')
    .where({ token_hash: hashOf(secret), purpose })
    .update({ used_at: null });
});

/** The current email key of the account a token belongs to (without spending the token). */
export const tokenAccountEmailKey = op(async (h, token: string, purpose: TokenPurpose): Promise<string | null> => {
  const row = await h
    .k('account_token as t')
    .join('user_account as a', 'a.id', 't.account_id')
    .where({ 't.purpose': purpose, 't.token_hash': hashOf(token) })
    .first('a.email_key');
  return row ? String(row.email_key) : null;
});

/** Voids every outstanding token of a purpose (a new reset request, a completed reset). */
export const voidTokens = op(async (h, accountId: number, purpose: TokenPurpose): Promise<void> => {
  await h.k('account_token').where({ account_id: accountId, purpose }).whereNull('used_at').update({ used_at: h.clock.now() });
});

/** Drops tokens (and mailed sign-in codes) that expired a day ago or more. */
export const pruneTokens = op(async (h): Promise<number> => {
  const before = h.clock.now() - 86400_000;
  const tokens = await h.k('account_token').where('expires_at', '<', before).del();
  return tokens + (await h.k('mail_code').where('expires_at', '<', before).del());
});
