/**
 * Creating an account for a request (signup action, record API, shell, bootstrap, an invitation,
 * a passkey, an upstream provider's newcomer, SCIM): the password hashed before the transaction,
 * then in one transaction the one maker (make.ts: the specification's chain, the address and name
 * rules, its own group, `users`) and what the way in adds, then the maker's audit rows.
 * Any refusal or failure leaves no row of the attempt.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { emailKeyTaken, lockAccounts, NO_PASSWORD } from '../store/accounts';
import { normalizeEmail, stringField, validateName, validatePassword } from './validate';
import { parseUsername } from './usernames';
import type { LookalikeRule } from './lookalikes';
import { accountMaker, type AccountWay } from './make';

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
  /** Whether the address counts as confirmed (an invitation's, a trusted provider's); absent: as the way decides (make.ts). */
  emailVerified?: boolean;
  /** A provisioning service's (SCIM): it may start disabled, and its externalId is kept. */
  disabled?: boolean;
  externalId?: string | null;
}

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

/**
 * `also` runs in the same transaction once the account exists (a passkey-only signup stores its
 * passkey there): if it throws, no row of the attempt remains. `way` is how the person arrives
 * (make.ts: `local` unless said); an address that looks like another account's is refused unless
 * `lookalike.allow` (the operator's flag).
 */
export async function createAccount(
  s: Services,
  actor: Actor,
  input: NewAccount,
  also?: (tx: Tx, account: { id: number; referenceId: string }) => Promise<void>,
  options: { way?: Extract<AccountWay, 'local' | 'invitation' | 'upstream' | 'scim'>; lookalike?: Pick<LookalikeRule, 'allow' | 'flag'> } = {},
): Promise<CreatedAccount> {
  // Fast refusal before the expensive hash; the maker re-checks under the lock.
  if (await emailKeyTaken(s.store.root, input.emailKey)) throw new AppError('email_taken', 'an account with this email already exists');
  const passwordHash = input.password === null ? NO_PASSWORD : await s.passwords.hash(input.password);

  const made = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const account = await accountMaker(
      tx,
      actor,
      options.way ?? 'local',
    )({
      email: input.email,
      name: input.name,
      username: input.username,
      passwordHash,
      referenceId: input.referenceId,
      emailVerified: input.emailVerified,
      disabled: input.disabled,
      externalId: input.externalId,
      lookalike: options.lookalike,
    });
    if (also) await also(tx, account);
    // Audited in the same transaction: an account made is an account audited, or neither.
    return { account, audited: await s.audit.within(tx, actor, account.audit) };
  });
  s.counters.signups++;
  made.audited();
  const { audit: _audit, emailKey: _key, ...created } = made.account;
  return created;
}
