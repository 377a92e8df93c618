/**
 * Making an account: the one place, for every way a person arrives (signup, the shell, the record
 * API, bootstrap, an invitation, a passkey, an upstream provider's newcomer, SCIM, an import file,
 * a directory source). It runs inside the caller's transaction, which holds lockAccounts, and
 * applies every rule of a new account, so no way in can skip one:
 *   - the name rule (validate.ts: a person's typed name refused with its hidden characters, another
 *     system's cleaned of them) and the address's form;
 *   - the address is nobody's: not another account's, not another's username, and not a look-alike
 *     of one (lookalikes.ts), checked under the lock with the write;
 *   - a username (the one asked for, or one made from the address);
 *   - the specification's chain for a person signing up (contract section 2): may execute `signup`,
 *     create on user_account, the account, create on usergroup, its own group, refer, and the
 *     memberships of its own group and `users`; the table defaults apply on every way;
 *   - the first administrator, for a person only (a provisioned account never is);
 *   - where it came from (the stored origin) and the audit row it makes, returned to be recorded
 *     once the transaction has committed.
 * What a way in adds (a passkey, a linked identity, an invitation's groups, a source's entry) it
 * writes itself in the same transaction, after the account exists.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { AuditEntry } from '../audit';
import { requireAdministrator } from '../access/caller';
import { can } from '../permission/check';
import type { Operation } from '../permission/bits';
import type { Tx } from '../store/connection';
import {
  addMembership,
  type AccountOrigin,
  emailIsUsername,
  findAccountByEmailKey,
  insertAccount,
  insertGroup,
  systemGroupId,
  usernameInUse,
} from '../store/accounts';
import { readAction, readWorld } from '../store/guarded-rows';
import { takePosixId } from '../store/posix';
import { claimFirstAdministrator } from './administrators';
import { normalizeEmail, validateName, type NameOrigin } from './validate';
import { parseUsername, usernameFor } from './usernames';
import { checkedSkeleton, type LookalikeRule } from './lookalikes';

/**
 * The ways an account is made, as the maker tells them apart: made here by a person (`local`: a
 * signup, the shell, the record API, a passkey), through an invitation, for an upstream provider's
 * newcomer, by a provisioning service (`scim`), or brought from elsewhere (an import's format, a
 * directory source's `ldap`: those are stored as the account's origin; the others as made here).
 */
export const ACCOUNT_WAYS = ['local', 'invitation', 'upstream', 'scim', 'csv', 'keycloak', 'authelia', 'auth0', 'ldap'] as const;
export type AccountWay = (typeof ACCOUNT_WAYS)[number];

interface WayRules {
  /** Whether the specification's permission chain is asked (an invitation opens signup for its one address). */
  chain: boolean;
  /** A provisioning service, a file or a directory: an administrator's doing, never the first administrator. */
  provisioned: boolean;
  /** Who wrote the name: a person, refused with hidden characters; another system, cleaned of them. */
  names: NameOrigin;
  /** Stored in the account's origin column (null: made here). */
  origin: AccountOrigin | null;
  /** The audit event of the account made. */
  event: 'signup' | 'account_imported';
}

const PERSON = { provisioned: false, origin: null, event: 'signup' } as const;
const BROUGHT = { chain: false, provisioned: true, names: 'sent', event: 'account_imported' } as const;

/** What each way decides: one table, read by the maker only. */
const WAYS: Record<AccountWay, WayRules> = {
  local: { ...PERSON, chain: true, names: 'typed' },
  invitation: { ...PERSON, chain: false, names: 'typed' },
  upstream: { ...PERSON, chain: true, names: 'sent' },
  // An administrator's token: it passes the chain, which is still asked as for any signup.
  scim: { chain: true, provisioned: true, names: 'sent', origin: null, event: 'signup' },
  csv: { ...BROUGHT, origin: 'csv' },
  keycloak: { ...BROUGHT, origin: 'keycloak' },
  authelia: { ...BROUGHT, origin: 'authelia' },
  auth0: { ...BROUGHT, origin: 'auth0' },
  ldap: { ...BROUGHT, origin: 'ldap' },
};

/** The refusals' words, where a caller's report says them its own way (a directory source's). */
export interface RefusalWords {
  emailTaken: string;
  emailIsUsername: string;
  usernameTaken: (username: string) => string;
}

const WORDS: RefusalWords = {
  emailTaken: 'an account with this email already exists',
  emailIsUsername: 'this email is the username of another account',
  usernameTaken: (username) => `the username ${username} is taken`,
};

export interface AccountInput {
  email: string;
  name: string;
  /** The one asked for; absent: one is made from the email (usernames.ts). */
  username?: string;
  /** A username asked for and taken: refused (the default), or one made from the email instead (an import). */
  ifUsernameTaken?: 'refuse' | 'make-one';
  /** What the password column holds: a hash (Gatehouse's or an imported one), or NO_PASSWORD. */
  passwordHash: string;
  /** Its reference_id, when something made before it must name it (a passkey's user handle). */
  referenceId?: string;
  /** Whether the address counts as confirmed; absent: when a provisioning source vouches for it. */
  emailVerified?: boolean;
  disabled?: boolean;
  /** The id a provisioning service (SCIM) gave it, kept as given. */
  externalId?: string | null;
  /** The operator let a look-alike address in on purpose (--allow-lookalike), and the flag a refusal names. */
  lookalike?: Pick<LookalikeRule, 'allow' | 'flag'>;
  /** The directory source it came from, named in its audit row. */
  source?: string;
  words?: Partial<RefusalWords>;
}

export interface MadeAccount {
  id: number;
  referenceId: string;
  email: string;
  emailKey: string;
  username: string;
  name: string;
  usergroupReferenceId: string;
  becameAdministrator: boolean;
  /** The audit rows of the account made (signup writes them in its transaction: accounts/create.ts). */
  audit: AuditEntry[];
}

const signupClosed = (why: string) => new AppError('signup_closed', `signup is closed: ${why}`);

/** Step 1 of the chain, also the cheap check made before any validation or hashing work is spent. */
export async function assertSignupOpen(tx: Tx, principal: Actor['principal']): Promise<void> {
  const action = await readAction(tx, 'user_account', 'signup');
  if (!action || !can(principal, 'execute', action.guard)) throw signupClosed('the signup action is not open to you');
}

/**
 * The account maker for one transaction (the caller holds lockAccounts): call it once per account.
 * The tables' defaults and the `users` group are read once, so an import's batch of 500 reads them
 * once, not 500 times.
 */
export function accountMaker(tx: Tx, actor: Actor, way: AccountWay): (input: AccountInput) => Promise<MadeAccount> {
  const rules = WAYS[way];
  if (rules.provisioned) requireAdministrator(actor, way === 'scim' ? 'provision accounts' : 'bring accounts in');
  const worlds = new Map<string, ReturnType<typeof readWorld>>();
  let users: Promise<number> | undefined;
  /** A table's defaults; with the chain, the caller must also hold `op` on it. */
  const table = async (name: string, op: Operation) => {
    if (!worlds.has(name)) worlds.set(name, readWorld(tx, name));
    const world = await worlds.get(name)!;
    if (rules.chain && !can(actor.principal, op, world.guard)) throw signupClosed(`${op} permission on ${name} is not granted`);
    return world.row.default_permission;
  };

  return async (input) => {
    const words = { ...WORDS, ...input.words };
    const { email, key } = normalizeEmail(input.email);
    const name = validateName(input.name, rules.names);
    const asked = input.username === undefined ? undefined : parseUsername(input.username);
    if (rules.chain) await assertSignupOpen(tx, actor.principal); // 1
    const accountPermission = await table('user_account', 'create'); // 2
    if (await findAccountByEmailKey(tx, key)) throw new AppError('email_taken', words.emailTaken);
    if (await emailIsUsername(tx, key)) throw new AppError('email_taken', words.emailIsUsername);
    // A guest (signup, an invitation's or a provider's newcomer) is answered as for a taken address,
    // naming nobody; an administrator (the shell, an import's report, SCIM) is told which account.
    const emailSkeleton = await checkedSkeleton(tx, key, { reveal: actor.principal.isAdmin, ...input.lookalike });
    let username: string;
    if (asked !== undefined && (await usernameInUse(tx, asked))) {
      if (input.ifUsernameTaken !== 'make-one') throw new AppError('name_taken', words.usernameTaken(asked));
      username = await usernameFor(tx, email, undefined);
    } else username = await usernameFor(tx, email, asked);
    const account = await insertAccount(tx, {
      email,
      emailKey: key,
      emailSkeleton,
      username,
      name,
      passwordHash: input.passwordHash,
      permission: accountPermission,
      referenceId: input.referenceId,
      // A provisioning source vouches for the address it sends.
      emailVerified: input.emailVerified ?? rules.provisioned,
      disabled: input.disabled ?? false,
      externalId: input.externalId ?? null,
      origin: rules.origin,
      // Its uidNumber (and its user-private group's gidNumber), given once (contract section 25).
      posixId: await takePosixId(tx),
    }); // 3
    const groupPermission = await table('usergroup', 'create'); // 4
    const home = await insertGroup(tx, { name: `Home group of ${name}`.slice(0, 100), ownerId: account.id, permission: groupPermission, posixId: null }); // 5
    const membership = await table('membership', 'refer'); // 6
    await addMembership(tx, account.id, home.id, membership);
    // Every account also joins `users`, through which self-service actions are executable.
    await addMembership(tx, account.id, await (users ??= systemGroupId(tx, 'users')), membership);
    // A provisioned person is an ordinary account: administration is given by an administrator.
    const becameAdministrator = rules.provisioned ? false : await claimFirstAdministrator(tx, account.id);
    const fields = { account: account.referenceId, ...(input.source === undefined ? {} : { source: input.source }) };
    // The account's facts go with its events: they are written before it is committed, when no
    // other connection can read it yet (a webhook's body names the account by them).
    const about = { id: account.referenceId, email, name };
    const audit: AuditEntry[] = [{ event: rules.event, fields, about }];
    if (becameAdministrator) audit.push({ event: 'bootstrap', fields: { account: account.referenceId, outcome: 'created' }, about });
    return {
      id: account.id,
      referenceId: account.referenceId,
      email,
      emailKey: key,
      username,
      name,
      usergroupReferenceId: home.referenceId,
      becameAdministrator,
      audit,
    };
  };
}
