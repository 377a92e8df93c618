/**
 * App passwords (contract section 15): a credential of the sign-in home. An account makes one per
 * app that binds to the LDAP directory; it is shown once, kept as SHA-256, listed with its name
 * and last use, revoked one by one. An account with a second factor or without a password binds
 * with an app password only (its password alone would skip the second factor). Audited.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import { actorOf, requireAdministrator } from '../access/caller';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { deleteAppPassword, findAppPassword, insertAppPassword, listAppPasswords, touchAppPassword, type AppPasswordRow } from '../store/app-passwords';
import { validateName } from './validate';
import { callerAccount } from './acting';

/** At most this many per account: one per app, not one per login. */
const MAX_PER_ACCOUNT = 50;
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

/** 24 random bytes (192 bits), as 4 groups of 8 base64url characters an app's form takes whole. */
function newSecret(): string {
  const raw = randomBytes(24).toString('base64url');
  return raw.match(/.{8}/g)!.join('-');
}

export async function addAppPassword(
  s: Services,
  actor: Actor,
  account: AccountRow,
  rawName: string,
): Promise<{ appPassword: AppPasswordView; secret: string }> {
  const name = validateName(rawName);
  if ((await listAppPasswords(s.store.root, account.id)).length >= MAX_PER_ACCOUNT) {
    throw new AppError('conflict', `an account has at most ${MAX_PER_ACCOUNT} app passwords; revoke one first`);
  }
  const secret = newSecret();
  const row = await insertAppPassword(s.store.root, account.id, name, digest(secret));
  await s.audit.record('app_password_added', actor, { account: account.reference_id, app_password: row.reference_id });
  return { appPassword: appPasswordView(row), secret };
}

export async function listAppPasswordViews(s: Services, account: AccountRow): Promise<AppPasswordView[]> {
  return (await listAppPasswords(s.store.root, account.id)).map(appPasswordView);
}

export async function revokeAppPassword(s: Services, actor: Actor, account: AccountRow, id: string): Promise<void> {
  if (!(await deleteAppPassword(s.store.root, account.id, id))) throw new AppError('not_found', `no app password ${id.slice(0, 60)} for this account`);
  await s.audit.record('app_password_revoked', actor, { account: account.reference_id, app_password: id });
}

/**
 * Whether `secret` is one of the account's app passwords (one indexed read, no hashing work worth
 * timing); a match records its use at most once a minute.
 */
export async function matchAppPassword(s: Services, account: AccountRow, secret: string): Promise<boolean> {
  if (secret.length < 20 || secret.length > 100) return false;
  const row = await findAppPassword(s.store.root, account.id, digest(secret));
  if (!row) return false;
  // "Last used" to the minute: a write only when the one recorded is older (an app may bind on every request).
  if (row.last_used_at === null || s.clock.now() - row.last_used_at >= TOUCH_EVERY_MS) await touchAppPassword(s.store.root, row.id, TOUCH_EVERY_MS);
  return true;
}

/** What the front ends call: any account's (administrators and the shell, by email) and the caller's own. */
export interface AppPasswordOperations {
  add(actor: Actor, email: string, name: string): Promise<{ appPassword: AppPasswordView; secret: string }>;
  list(actor: Actor, email: string): Promise<AppPasswordView[]>;
  revoke(actor: Actor, email: string, id: string): Promise<void>;
  addMine(caller: Caller, name: string): Promise<{ appPassword: AppPasswordView; secret: string }>;
  listMine(caller: Caller): Promise<AppPasswordView[]>;
  revokeMine(caller: Caller, id: string): Promise<void>;
}

export function appPasswordOperations(s: Services, byEmail: (email: string) => Promise<AccountRow>): AppPasswordOperations {
  const other = async (actor: Actor, email: string) => {
    requireAdministrator(actor, "manage other accounts' app passwords");
    return byEmail(email);
  };
  const own = async (caller: Caller) => {
    const actor = await actorOf(s, caller);
    return { actor, account: await callerAccount({ s, actor }) };
  };
  return {
    add: async (actor, email, name) => addAppPassword(s, actor, await other(actor, email), name),
    list: async (actor, email) => listAppPasswordViews(s, await other(actor, email)),
    revoke: async (actor, email, id) => revokeAppPassword(s, actor, await other(actor, email), id),
    async addMine(caller, name) {
      const { actor, account } = await own(caller);
      return addAppPassword(s, actor, account, name);
    },
    listMine: async (caller) => listAppPasswordViews(s, (await own(caller)).account),
    async revokeMine(caller, id) {
      const { actor, account } = await own(caller);
      await revokeAppPassword(s, actor, account, id);
    },
  };
}
