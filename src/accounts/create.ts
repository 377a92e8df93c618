/**
 * Creating an account: the specification's signup chain, used by the signup action, the record
 * API and the CLI alike.
 *   1. caller may execute `signup`   2. caller may create on user_account   3. insert account
 *   4. caller may create on usergroup 5. insert the dedicated group
 *   6. caller may refer (membership) and the account joins its group.
 * All in one transaction: any refusal or failure leaves no row of the attempt.
 */
import { AppError } from '../errors';
import type { Deps } from '../deps';
import { can, Principal } from '../permission/check';
import { Operation } from '../permission/bits';
import type { Db } from '../store/connection';
import { isUniqueViolation } from '../store/connection';
import { addMembership, findAccountByEmailKey, insertAccount, insertGroup, lockAccounts, systemGroupId } from '../store/accounts';
import { loadAction, loadWorld } from '../store/records-meta';
import { emailKeyTaken, readActionGuard } from '../store/hot';
import { claimFirstAdministrator } from './bootstrap';
import { normalizeEmail, stringField, validateName, validatePassword } from './validate';

export interface NewAccount {
  email: string;
  emailKey: string;
  name: string;
  password: string;
}

export interface CreatedAccount {
  id: number;
  referenceId: string;
  email: string;
  name: string;
  usergroupReferenceId: string;
  becameAdministrator: boolean;
}

/** Reads and validates the signup attributes (only the documented ones are read). */
export function parseNewAccount(attributes: Record<string, unknown>, minLength: number, requireConfirm = true): NewAccount {
  const { email, key } = normalizeEmail(stringField(attributes, 'email')!);
  const name = validateName(stringField(attributes, 'name')!);
  const password = stringField(attributes, 'password')!;
  const confirm = stringField(attributes, 'passwordConfirm', requireConfirm);
  validatePassword(password, confirm, key, minLength);
  return { email, emailKey: key, name, password };
}

function signupClosed(why: string): AppError {
  return new AppError('signup_closed', `signup is closed: ${why}`);
}

async function checkSignupAction(db: Db, principal: Principal): Promise<void> {
  const action = await loadAction(db, 'user_account', 'signup');
  if (!action || !can(principal, 'execute', action.guard)) throw signupClosed('the signup action is not open to you');
}

async function checkTable(db: Db, principal: Principal, table: string, op: Operation) {
  const world = await loadWorld(db, table);
  if (!can(principal, op, world.guard)) throw signupClosed(`${op} permission on ${table} is not granted`);
  return world;
}

/** The cheap part of step 1, before any validation or hashing work is spent. */
export async function assertSignupOpen(deps: Deps, principal: Principal): Promise<void> {
  const guard = await readActionGuard(deps.store, 'user_account', 'signup');
  if (!guard || !can(principal, 'execute', guard)) throw signupClosed('the signup action is not open to you');
}

export async function createAccount(deps: Deps, principal: Principal, input: NewAccount): Promise<CreatedAccount> {
  const { store, passwords } = deps;
  // Fast refusal before the expensive hash; the transaction below re-checks under the lock.
  if (await emailKeyTaken(store, input.emailKey)) {
    throw new AppError('email_taken', 'an account with this email already exists');
  }
  const passwordHash = await passwords.hash(input.password);

  try {
    return await store.transaction(async (trx) => {
      await lockAccounts(trx);
      await checkSignupAction(trx, principal); // 1
      const accountWorld = await checkTable(trx, principal, 'user_account', 'create'); // 2
      if (await findAccountByEmailKey(trx, input.emailKey)) {
        throw new AppError('email_taken', 'an account with this email already exists');
      }
      const account = await insertAccount(trx, {
        email: input.email,
        emailKey: input.emailKey,
        name: input.name,
        passwordHash,
        permission: accountWorld.row.default_permission,
      }); // 3
      const groupWorld = await checkTable(trx, principal, 'usergroup', 'create'); // 4
      const group = await insertGroup(trx, {
        name: `Home group of ${input.name}`.slice(0, 100),
        ownerId: account.id,
        permission: groupWorld.row.default_permission,
      }); // 5
      const membershipWorld = await checkTable(trx, principal, 'membership', 'refer'); // 6
      await addMembership(trx, account.id, group.id, membershipWorld.row.default_permission);
      // Every account also joins `users`, through which self-service actions are executable.
      await addMembership(trx, account.id, await systemGroupId(trx, 'users'), membershipWorld.row.default_permission);
      const becameAdministrator = await claimFirstAdministrator(trx, account.id);
      return {
        id: account.id,
        referenceId: account.referenceId,
        email: input.email,
        name: input.name,
        usergroupReferenceId: group.referenceId,
        becameAdministrator,
      };
    });
  } catch (err) {
    // Two signups of one email racing past the first check: the unique index decides.
    if (isUniqueViolation(err)) throw new AppError('email_taken', 'an account with this email already exists');
    throw err;
  }
}
