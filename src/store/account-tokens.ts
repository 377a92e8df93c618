/**
 * Single-use account tokens (email verification, password reset): 256 random bits, stored only
 * as SHA-256 hashes, bound to the account and its email, expiring. Consuming is one atomic
 * UPDATE, so a token works once even when two requests race.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './connection';

export type TokenPurpose = 'verify_email' | 'reset_password';

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export async function issueToken(db: Db, accountId: number, purpose: TokenPurpose, emailKey: string, ttlSeconds: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = Date.now();
  await db('account_token').insert({
    account_id: accountId,
    purpose,
    token_hash: hashOf(token),
    email_key: emailKey,
    expires_at: now + ttlSeconds * 1000,
    created_at: now,
  });
  return token;
}

export type ConsumeResult =
  | { ok: true; accountId: number; emailKey: string }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export async function consumeToken(db: Db, token: string, purpose: TokenPurpose, now = Date.now()): Promise<ConsumeResult> {
  const tokenHash = hashOf(token);
  const updated = await db('account_token')
    .where({ token_hash: tokenHash, purpose })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now });
  const row = await db('account_token').where({ token_hash: tokenHash, purpose }).first('account_id', 'email_key', 'used_at', 'expires_at');
  if (!row) return { ok: false, reason: 'unknown' };
  if (updated !== 1) return { ok: false, reason: Number(row.expires_at) <= now && row.used_at === null ? 'expired' : 'used' };
  return { ok: true, accountId: Number(row.account_id), emailKey: String(row.email_key) };
}

/** The current email key of the account a token belongs to (without spending the token). */
export async function tokenAccountEmailKey(db: Db, token: string, purpose: TokenPurpose): Promise<string | null> {
  const row = await db('account_token as t')
    .join('user_account as a', 'a.id', 't.account_id')
    .where({ 't.purpose': purpose, 't.token_hash': hashOf(token) })
    .first('a.email_key');
  return row ? String(row.email_key) : null;
}

/** Voids every outstanding token of a purpose (a new reset request, a completed reset). */
export async function voidTokens(db: Db, accountId: number, purpose: TokenPurpose, now = Date.now()): Promise<void> {
  await db('account_token').where({ account_id: accountId, purpose }).whereNull('used_at').update({ used_at: now });
}

/** Drops tokens that expired a day ago or more. */
export async function pruneTokens(db: Db, now = Date.now()): Promise<number> {
  return db('account_token').where('expires_at', '<', now - 86400_000).del();
}
