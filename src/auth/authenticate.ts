/**
 * Bearer token → Principal. No credentials makes a guest; a token that is present but not
 * valid (bad signature, expired, stale auth_version, account gone or disabled) is refused, never
 * downgraded to a guest.
 */
import type { Services } from '../services';
import { GUEST, Guarded, Principal } from '../permission/check';
import { readRequestFacts } from '../store/permissions';
import { invalidToken } from './tokens';

/** Some clients send these instead of leaving the header out. */
const PLACEHOLDERS = new Set(['', 'null', 'undefined']);

/** The token in an Authorization header, or null when the header carries no bearer credentials. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!m) return null;
  const token = (m[1] ?? '').trim();
  return PLACEHOLDERS.has(token) ? null : token;
}

/**
 * The caller, and (when `table` is given) that record type's table permission, read together in
 * one round trip: the record API's hot path.
 */
export async function authenticate(
  s: Services,
  header: string | null,
  table: string | null = null,
): Promise<{ principal: Principal; table?: Guarded; session: string | null }> {
  const token = bearerToken(header);
  const verified = token === null ? null : await s.tokens.verify(token);
  // Checked against the store on every request: no cache may outlive a revocation.
  const sid = verified?.claims.sid ?? null;
  const facts = await readRequestFacts(s.store.root, verified && { referenceId: verified.claims.sub, kid: verified.kid, sid }, table);
  if (verified === null) return { principal: GUEST, table: facts.table, session: null };
  const account = facts.account;
  if (!account || account.disabled || !account.keyValid || !account.sessionValid || account.authVersion !== verified.claims.auth_version) throw invalidToken();
  return {
    principal: { accountId: account.id, referenceId: account.referenceId, groupIds: account.groupIds, isAdmin: account.isAdmin },
    table: facts.table,
    session: sid,
  };
}
