/**
 * What apps are told of a person, whichever protocol asks (OpenID Connect's claims, SAML's
 * attributes): one mapping of the account's row. Groups are names of its managed groups, its
 * dedicated group excluded.
 */
import type { Services } from '../services';
import { accountFacts, type ClaimsRow } from '../store/oidc';

export interface AccountClaims {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  preferred_username: string;
  groups: string[];
}

/** The claims of an account's row, or undefined when it is gone or disabled. */
export function claimsFrom(sub: string, account: ClaimsRow | undefined): AccountClaims | undefined {
  if (!account || account.disabled) return undefined;
  return {
    sub,
    email: account.email,
    email_verified: account.email_verified,
    name: account.name,
    preferred_username: account.username,
    groups: account.groups,
  };
}

/** An enabled account's claims, or undefined. */
export async function claimsOf(s: Services, sub: string): Promise<AccountClaims | undefined> {
  return claimsFrom(sub, (await accountFacts(s.store.root, sub, null)).claims);
}
