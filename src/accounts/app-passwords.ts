/**
 * App passwords (contract section 15): a credential of the sign-in home. An account makes one per
 * app that binds to the LDAP directory; it is shown once, kept as SHA-256, listed with its name
 * and last use, revoked one by one. An account with a second factor or without a password binds
 * with an app password only (its password alone would skip the second factor). Audited.
 */
import { createHash } from 'node:crypto';
import { newShellSafeId } from '../auth/ids';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { deleteAppPassword, findAccountForBind, insertAppPassword, listAppPasswords, touchAppPassword, type AppPasswordRow } from '../store/app-passwords';
import { type CredentialKind, credentialOperations, type CredentialOperations } from './named-credentials';
import { afterRecentSignin } from './recent-signin';

const TOUCH_EVERY_MS = 60_000;

export interface AppPasswordView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export const appPasswordView = (r: AppPasswordRow): AppPasswordView => ({
  id: r.reference_id,
  name: r.name,
  created_at: new Date(r.created_at).toISOString(),
  last_used_at: r.last_used_at === null ? null : new Date(r.last_used_at).toISOString(),
});

const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/**
 * 24 random bytes (192 bits), as 4 groups of 8 base64url characters an app's form takes whole,
 * never starting with '-' (a shell would read it as an option).
 */
export function newAppPassword(): string {
  const raw = newShellSafeId(24);
  return raw.match(/.{8}/g)!.join('-');
}

const appPasswords: CredentialKind<AppPasswordRow, AppPasswordView, { name: string }> = {
  event: 'app_password',
  noun: 'app password',
  async insert(s, account, input) {
    const secret = newAppPassword();
    return { row: await insertAppPassword(s.store.root, account.id, input.name, digest(secret)), secret };
  },
  list: (s, account) => listAppPasswords(s.store.root, account.id),
  remove: (s, account, id) => deleteAppPassword(s.store.root, account.id, id),
  view: appPasswordView,
};

/**
 * The account a bind names and whether `secret` is one of its app passwords, in one indexed read
 * (no hashing work worth timing); a match records its use at most once a minute.
 */
export async function accountForBind(
  s: Services,
  username: string,
  secret: string,
): Promise<{ account: AccountRow; appPasswordId: number | null } | undefined> {
  // Too short or too long to be one: the account alone (a hash of nothing that matches).
  const plausible = secret.length >= 20 && secret.length <= 100;
  const found = await findAccountForBind(s.store.root, username, plausible ? digest(secret) : '');
  if (!found) return undefined;
  const row = found.appPassword;
  // "Last used" to the minute: a write only when the one recorded is older (an app may bind on every request).
  if (row && (row.last_used_at === null || s.clock.now() - row.last_used_at >= TOUCH_EVERY_MS)) await touchAppPassword(s.store.root, row.id, TOUCH_EVERY_MS);
  return { account: found.account, appPasswordId: row?.id ?? null };
}

/** What the front ends call: any account's (administrators and the shell, by email) and the caller's own. */
export type AppPasswordOperations = CredentialOperations<AppPasswordView, { name: string }>;

/** An app password is a way in: making one needs a recent sign-in (the shell is not asked; an API key never makes one). */
export const appPasswordOperations = (s: Services, byEmail: (email: string) => Promise<AccountRow>): AppPasswordOperations =>
  afterRecentSignin(s, credentialOperations(s, byEmail, appPasswords));
