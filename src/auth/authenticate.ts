/**
 * Bearer token → Principal. No credentials makes a guest; a token that is present but not
 * valid (bad signature, expired, stale auth_version, account gone or disabled) is refused, never
 * downgraded to a guest.
 */
import type { Deps } from '../deps';
import { GUEST, Principal } from '../permission/check';
import { loadAuthFacts } from '../store/accounts';
import { invalidToken } from './tokens';

/** Some clients send these instead of leaving the header out. */
const PLACEHOLDERS = new Set(['', 'null', 'undefined']);

/** The token in an Authorization header, or null when the header carries no bearer credentials. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!m) return null;
  const token = (m[1] ?? '').trim();
  return PLACEHOLDERS.has(token) ? null : token;
}

export async function authenticate(deps: Deps, header: string | undefined): Promise<Principal> {
  const token = bearerToken(header);
  if (token === null) return GUEST;
  const claims = deps.tokens.verify(token);
  // Checked against the store on every request: no cache may outlive a revocation.
  const facts = await loadAuthFacts(deps.store.knex, claims.sub);
  if (!facts || facts.disabled || facts.authVersion !== claims.auth_version) throw invalidToken();
  return { accountId: facts.id, referenceId: facts.referenceId, groupIds: facts.groupIds, isAdmin: facts.isAdmin };
}
