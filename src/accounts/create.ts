/**
 * Creating an account, the one way every front end does it (signup action, record API, shell,
 * bootstrap): the specification's chain in one transaction, then the same audit rows.
 *   1. caller may execute `signup`   2. caller may create on user_account   3. insert account
 *   4. caller may create on usergroup 5. insert the dedicated group
 *   6. caller may refer (membership) and the account joins its group.
 * Any refusal or failure leaves no row of the attempt.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { can, Principal } from '../permission/check';
import type { Operation } from '../permission/bits';
import type { Tx } from '../store/connection';
import {
  addMembership,
  emailIsUsername,
  emailKeyTaken,
  findAccountByEmailKey,
  insertAccount,
  insertGroup,
  lockAccounts,
  NO_PASSWORD,
  systemGroupId,
} from '../store/accounts';
import { readAction, readWorld } from '../store/guarded-rows';
import { claimFirstAdministrator } from './administrators';
import { normalizeEmail, stringField, validateName, validatePassword } from './validate';
import { parseUsername, usernameFor } from './usernames';
import { checkedSkeleton, type LookalikeRule } from './lookalikes';

export interface NewAccount {
  email: string;
  emailKey: string;
  name: string;
  /** Asked for at signup; absent: one is made from the email (accounts/usernames.ts). */
  username?: string;
  /** null: an account that signs in with a passkey only (its password column holds ''). */
  password: string | null;
  /** Its reference_id, when something made before it must name it (a passkey's user handle). */
  referenceId?: string;
  /**
   * Made by a provisioning service (SCIM): the email is vouched for, the account may start
   * disabled, the service's externalId is kept, and it never becomes the first administrator.
   */
  provisioned?: { externalId: string | null; disabled: boolean };
}

/** The stored password of an account that has none: no hash matches it (auth/passwords.ts). */

export interface CreatedAccount {
  id: number;
  referenceId: string;
  email: string;
  username: string;
  name: string;
  usergroupReferenceId: string;
  becameAdministrator: boolean;
}

/** Reads and validates the signup attributes (only the documented ones are read). */
export function parseNewAccount(attributes: Record<string, unknown>, minLength: number): NewAccount {
  const { email, key } = normalizeEmail(stringField(attributes, 'email')!);
  const name = validateName(stringField(attributes, 'name')!);
  const password = stringField(attributes, 'password')!;
  const confirm = stringField(attributes, 'passwordConfirm');
  validatePassword(password, confirm, key, minLength);
  const asked = attributes.username;
  return { email, emailKey: key, name, password, ...(asked === undefined || asked === '' ? {} : { username: parseUsername(asked) }) };
}

/** The shell's form: the name defaults to the part of the email before @. */
export function newAccountFrom(input: { email: string; name?: string; password: string }, minLength: number): NewAccount {
  const { email, key } = normalizeEmail(input.email);
  const name = validateName(input.name ?? email.split('@')[0]);
  validatePassword(input.password, undefined, key, minLength);
  return { email, emailKey: key, name, password: input.password };
}

const signupClosed = (why: string) => new AppError('signup_closed', `signup is closed: ${why}`);

/** Step 1, also the cheap check made before any validation or hashing work is spent. */
export async function assertSignupOpen(tx: Tx, principal: Principal): Promise<void> {
  const action = await readAction(tx, 'user_account', 'signup');
  if (!action || !can(principal, 'execute', action.guard)) throw signupClosed('the signup action is not open to you');
}

async function checkTable(tx: Tx, principal: Principal, table: string, op: Operation, invited: boolean) {
  const world = await readWorld(tx, table);
  // An invitation opens signup for its one address: the chain's permissions are not asked, its defaults still apply.
  if (!invited && !can(principal, op, world.guard)) throw signupClosed(`${op} permission on ${table} is not granted`);
  return world;
}

/**
 * `also` runs in the same transaction once the account exists (a passkey-only signup stores its
 * passkey there): if it throws, no row of the attempt remains. An address that looks like another
 * account's is refused (accounts/lookalikes.ts) unless `lookalike.allow` (the operator's flag).
 */
export async function createAccount(
  s: Services,
  actor: Actor,
  input: NewAccount,
  also?: (tx: Tx, account: { id: number; referenceId: string }) => Promise<void>,
  options: { invited?: boolean; lookalike?: Pick<LookalikeRule, 'allow' | 'flag'> } = {},
): Promise<CreatedAccount> {
  const invited = options.invited === true;
  const { store, passwords } = s;
  const principal = actor.principal;
  // Fast refusal before the expensive hash; the transaction below re-checks under the lock.
  if (await emailKeyTaken(store.root, input.emailKey)) throw new AppError('email_taken', 'an account with this email already exists');
  const passwordHash = input.password === null ? NO_PASSWORD : await passwords.hash(input.password);

  const created = await store.transaction(async (tx) => {
    await lockAccounts(tx);
    if (!invited) await assertSignupOpen(tx, principal); // 1
    const accountWorld = await checkTable(tx, principal, 'user_account', 'create', invited); // 2
    if (await findAccountByEmailKey(tx, input.emailKey)) throw new AppError('email_taken', 'an account with this email already exists');
    if (await emailIsUsername(tx, input.emailKey)) throw new AppError('email_taken', 'this email is the username of another account');
    // A guest (signup, an invitation's or a provider's newcomer) is answered as for a taken address, naming nobody.
    const emailSkeleton = await checkedSkeleton(tx, input.emailKey, { reveal: principal.isAdmin, ...options.lookalike });
    const username = await usernameFor(tx, input.email, input.username);
    const account = await insertAccount(tx, {
      email: input.email,
      emailKey: input.emailKey,
      emailSkeleton,
      username,
      name: input.name,
      passwordHash,
      permission: accountWorld.row.default_permission,
      referenceId: input.referenceId,
      provisioned: input.provisioned,
    }); // 3
    const groupWorld = await checkTable(tx, principal, 'usergroup', 'create', invited); // 4
    const group = await insertGroup(tx, {
      name: `Home group of ${input.name}`.slice(0, 100),
      ownerId: account.id,
      permission: groupWorld.row.default_permission,
    }); // 5
    const membershipWorld = await checkTable(tx, principal, 'membership', 'refer', invited); // 6
    await addMembership(tx, account.id, group.id, membershipWorld.row.default_permission);
    // Every account also joins `users`, through which self-service actions are executable.
    await addMembership(tx, account.id, await systemGroupId(tx, 'users'), membershipWorld.row.default_permission);
    // A provisioned person is an ordinary account: administration is given by an administrator.
    const becameAdministrator = input.provisioned ? false : await claimFirstAdministrator(tx, account.id);
    if (also) await also(tx, account);
    return {
      id: account.id,
      referenceId: account.referenceId,
      email: input.email,
      username,
      name: input.name,
      usergroupReferenceId: group.referenceId,
      becameAdministrator,
    };
  });
  s.counters.signups++;
  // Audited after the commit: the audit write must not wait for the connection the transaction held.
  await s.audit.record('signup', actor, { account: created.referenceId });
  if (created.becameAdministrator) await s.audit.record('bootstrap', actor, { account: created.referenceId, outcome: 'created' });
  return created;
}
