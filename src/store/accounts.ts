/** Queries on accounts, groups and memberships. */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors';
import { Handle, isUniqueViolation, op, seal } from './handle';
import { deleteGroupRows, memberGroupsSql } from './nesting';
import { decodeRow } from './schema';
import { filterSql } from './readable';

export type SystemRole = 'administrators' | 'users';

/** The password column of an account without a password (passkeys or providers only): no hash matches it. */
export const NO_PASSWORD = '';

/**
 * Where an account came from when it was not made here (the `origin` column; null: made here).
 * An import's format names the people it made, `ldap` those a directory source synced. A new way
 * people arrive is one line here.
 */
export const ACCOUNT_ORIGINS = ['keycloak', 'authelia', 'auth0', 'csv', 'ldap'] as const;
export type AccountOrigin = (typeof ACCOUNT_ORIGINS)[number];

export interface AccountRow {
  id: number;
  reference_id: string;
  email: string;
  email_key: string;
  /**
   * The address's confusable skeleton (accounts/lookalikes.ts): addresses that look alike share
   * one. Indexed, not unique (an operator may let a look-alike in); null only for a row written
   * around the accounts' code.
   */
  email_skeleton: string | null;
  /** Unique, lower case: the LDAP uid and OIDC's preferred_username. */
  username: string;
  name: string;
  password: string;
  permission: number;
  user_account_id: number | null;
  auth_version: number;
  disabled: boolean;
  email_verified: boolean;
  totp_secret: string | null;
  totp_enabled: boolean;
  totp_last_step: number | null;
  /** The id a provisioning service (SCIM) gave the account, kept as given; null otherwise. */
  external_id: string | null;
  /** What made it elsewhere (set when it is made, never changed after); null: made here. */
  origin: AccountOrigin | null;
  /** The POSIX number (uidNumber, and the gidNumber of its user-private group), given once; null only for a row written around the accounts' code. */
  posix_id: number | null;
  /** The login shell the directory serves; null: the default, /bin/bash. */
  login_shell: string | null;
  /** The language chosen on /account (en, de, fr); null: as the browser asks. */
  language: string | null;
  created_at: number;
  updated_at: number;
}

/** Columns an account update may set (never its ids, nor where it came from). */
export type AccountChanges = Partial<
  Omit<AccountRow, 'id' | 'reference_id' | 'user_account_id' | 'created_at' | 'updated_at' | 'auth_version' | 'origin' | 'posix_id'>
>;

const emailTaken = () => new AppError('email_taken', 'an account with this email already exists');
const usernameTaken = () => new AppError('name_taken', 'this username is taken');
/** Which unique column a violation is about: the username's index, or the email's. */
const taken = (err: unknown) => {
  const e = err as { message?: string; constraint?: string; detail?: string };
  return /username/.test(`${e.message ?? ''} ${e.constraint ?? ''} ${e.detail ?? ''}`) ? usernameTaken() : emailTaken();
};

/** One account by a unique column: on the root, a read-pool statement (the writer stays free). */
async function first(h: Handle, column: 'email_key' | 'id' | 'reference_id' | 'username', value: string | number): Promise<AccountRow | undefined> {
  const [raw] = await h.all(`SELECT * FROM user_account WHERE ${column} = ?`, [value]);
  return raw ? decodeRow<AccountRow>('user_account', raw) : undefined;
}

export const findAccountByEmailKey = op((h, emailKey: string) => first(h, 'email_key', emailKey));
export const findAccountById = op((h, id: number) => first(h, 'id', id));
export const findAccountByReference = op((h, referenceId: string) => first(h, 'reference_id', referenceId));

/** Whether an account uses this email key (a fast pre-check on the read pool; the transaction re-checks). */
export const emailKeyTaken = op(async (h, emailKey: string) => (await h.all('SELECT 1 AS one FROM user_account WHERE email_key = ?', [emailKey])).length > 0);

async function insertReturningId(h: Handle, table: string, row: Record<string, unknown>): Promise<number> {
  const [inserted] = await h.k(table).insert(row).returning('id');
  return Number(typeof inserted === 'object' ? inserted.id : inserted);
}

export const insertAccount = op(
  async (
    h,
    fields: {
      email: string;
      emailKey: string;
      emailSkeleton: string;
      username: string;
      name: string;
      passwordHash: string;
      permission: number;
      referenceId?: string;
      emailVerified: boolean;
      disabled: boolean;
      /** The id a provisioning service (SCIM) gave it; null otherwise. */
      externalId: string | null;
      /** Made elsewhere (an import's format, a directory source); null: made here. */
      origin: AccountOrigin | null;
      /** Its POSIX number (uidNumber), taken in the same transaction (store/posix.ts). */
      posixId: number;
    },
  ): Promise<{ id: number; referenceId: string }> => {
    const now = h.clock.now();
    // Chosen beforehand only by a passkey signup, whose passkey already names it as its user handle.
    const referenceId = fields.referenceId ?? randomUUID();
    let id: number;
    try {
      id = await insertReturningId(h, 'user_account', {
        reference_id: referenceId,
        email: fields.email,
        email_key: fields.emailKey,
        email_skeleton: fields.emailSkeleton,
        username: fields.username,
        name: fields.name,
        password: fields.passwordHash,
        permission: fields.permission,
        email_verified: fields.emailVerified,
        external_id: fields.externalId,
        disabled: fields.disabled,
        origin: fields.origin,
        posix_id: fields.posixId,
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      // Two signups of one email racing past the first check: the unique index decides.
      if (isUniqueViolation(err)) throw taken(err);
      throw err;
    }
    // An account owns its own row.
    await h.k('user_account').where({ id }).update({ user_account_id: id });
    return { id, referenceId };
  },
);

export const insertGroup = op(
  async (
    h,
    fields: {
      name: string;
      ownerId: number | null;
      permission: number;
      externalId?: string | null;
      /** Its POSIX number (gidNumber), taken in the same transaction; null for an account's dedicated group, whose number is its account's. */
      posixId: number | null;
    },
  ): Promise<{ id: number; referenceId: string }> => {
    const now = h.clock.now();
    const referenceId = randomUUID();
    const id = await insertReturningId(h, 'usergroup', {
      reference_id: referenceId,
      name: fields.name,
      permission: fields.permission,
      user_account_id: fields.ownerId,
      external_id: fields.externalId ?? null,
      posix_id: fields.posixId,
      created_at: now,
      updated_at: now,
    });
    return { id, referenceId };
  },
);

export const addMembership = op(async (h, accountId: number, groupId: number, permission: number): Promise<void> => {
  const now = h.clock.now();
  await h
    .k('membership')
    .insert({
      reference_id: randomUUID(),
      account_id: accountId,
      usergroup_id: groupId,
      permission,
      user_account_id: accountId,
      created_at: now,
      updated_at: now,
    })
    .onConflict(['account_id', 'usergroup_id'])
    .ignore();
});

export const systemGroupId = op(async (h, role: SystemRole): Promise<number> => {
  const row = await h.k('usergroup').where({ system_role: role }).first('id');
  if (!row) throw new Error(`system group ${role} is missing: the store was not migrated`);
  return Number(row.id);
});

export const countAdministrators = op(async (h): Promise<number> => {
  const row = await h.k('membership as m').join('usergroup as g', 'g.id', 'm.usergroup_id').where('g.system_role', 'administrators').count({ n: '*' }).first();
  return Number(row?.n ?? 0);
});

/** Administrators other than `accountId` who can sign in (a disabled one runs nothing). */
export const enabledAdministratorsBesides = op(async (h, accountId: number): Promise<number> => {
  const row = await h
    .k('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .join('user_account as a', 'a.id', 'm.account_id')
    .where('g.system_role', 'administrators')
    .whereNot('m.account_id', accountId)
    .where('a.disabled', false)
    .count({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
});

export const isAdministrator = op(async (h, accountId: number): Promise<boolean> => {
  const row = await h
    .k('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where({ 'g.system_role': 'administrators', 'm.account_id': accountId })
    .first('m.id');
  return row !== undefined;
});

/** Every account with whether it administers, oldest first. */
export const listAccounts = op(async (h): Promise<Array<AccountRow & { administrator: boolean }>> => {
  const admins = h.k('membership as m').join('usergroup as g', 'g.id', 'm.usergroup_id').where('g.system_role', 'administrators').select('m.account_id');
  const rows: Array<Record<string, unknown>> = await h.k('user_account').orderBy('id');
  const adminIds = new Set((await admins).map((r: { account_id: unknown }) => Number(r.account_id)));
  return rows.map((r) => {
    const account = decodeRow<AccountRow>('user_account', r);
    return { ...account, administrator: adminIds.has(account.id) };
  });
});

/**
 * One page of accounts, newest first, for the console: keyset paging (`beforeId`), so the
 * millionth row costs what the first does; `q` is a literal substring of the email or the name
 * (case ignored; % and _ are not wildcards), matched as the record list's filter= matches it and
 * served by the same trigram indexes (SQLite: the FTS5 table's candidates; PostgreSQL: pg_trgm),
 * so a rare term does not read every account in id order. The page's administrators are read in
 * one statement.
 */
export const searchAccounts = op(async (h, o: { q?: string; beforeId?: number; limit: number }): Promise<Array<AccountRow & { administrator: boolean }>> => {
  let where = '1 = 1';
  const params: unknown[] = [];
  if (o.beforeId !== undefined) {
    where += ' AND t.id < ?';
    params.push(o.beforeId);
  }
  if (o.q) {
    const filtered = await filterSql(h, 'user_account', ['email', 'name'], o.q);
    where += filtered.sql;
    params.push(...filtered.params);
  }
  const rows = await h.all(`SELECT t.* FROM user_account t WHERE ${where} ORDER BY t.id DESC LIMIT ?`, [...params, o.limit]);
  const ids = rows.map((r) => Number(r.id));
  // The page's ids are at most `limit` (a console page): one bound placeholder each.
  const admins = ids.length
    ? await h.all(
        `SELECT m.account_id FROM membership m JOIN usergroup g ON g.id = m.usergroup_id
          WHERE g.system_role = 'administrators' AND m.account_id IN (${ids.map(() => '?').join(', ')})`,
        ids,
      )
    : [];
  const adminIds = new Set(admins.map((r) => Number(r.account_id)));
  return rows.map((r) => {
    const account = decodeRow<AccountRow>('user_account', r);
    return { ...account, administrator: adminIds.has(account.id) };
  });
});

/** An address and its skeleton change together, or the look-alike check would compare against a stale one. */
function assertSkeletonWithKey(fields: AccountChanges): void {
  if (fields.email_key !== undefined && fields.email_skeleton === undefined) throw new Error('an email_key change without its email_skeleton');
}

/** Sets columns; an email change that collides with another account is email_taken. */
export const updateAccount = op(async (h, id: number, fields: AccountChanges): Promise<void> => {
  assertSkeletonWithKey(fields);
  try {
    await h
      .k('user_account')
      .where({ id })
      .update({ ...fields, updated_at: h.clock.now() });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken(err);
    throw err;
  }
});

/**
 * Sets columns and invalidates every token issued so far for the account (every session it had
 * ends). Through accounts/session-ends.ts only, which tells the clients those sessions signed in to.
 */
export const bumpAuthVersion = op(async (h, id: number, fields: AccountChanges = {}): Promise<void> => {
  assertSkeletonWithKey(fields);
  try {
    await h
      .k('user_account')
      .where({ id })
      .update({ ...fields, auth_version: h.k.raw('auth_version + 1'), updated_at: h.clock.now() });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken(err);
    throw err;
  }
});

/**
 * Serializes account writes: SQLite takes its write lock here (not at a later read→write
 * upgrade, which would fail at once with SQLITE_BUSY), PostgreSQL takes a row lock.
 */
export const lockAccounts = op(async (h): Promise<void> => {
  await h
    .k('write_lock')
    .where({ name: 'accounts' })
    .update({ counter: h.k.raw('counter + 1') });
});

/**
 * Deletes an account and the groups it owns that nobody else is in (its dedicated group), and
 * what was shared with them. Through accounts/session-ends.ts only: its open sessions go with it,
 * and the clients they signed in to are told first.
 */
export const deleteAccount = op(async (h, id: number): Promise<void> => {
  const owned: Array<{ id: unknown }> = await h.k('usergroup').where({ user_account_id: id }).whereNull('system_role').select('id');
  const alone: number[] = [];
  for (const g of owned) {
    const others = await h.k('membership').where({ usergroup_id: g.id }).whereNot({ account_id: id }).first('id');
    if (!others) alone.push(Number(g.id));
  }
  await deleteGroupRows(seal(h), alone);
  await h.k('record_usergroup').where({ record_type: 'user_account', record_id: id }).del();
  // The OpenID Connect provider's rows name the account by reference (no foreign key): its grants,
  // every token they issued, and its provider sessions go with it.
  const account = await h.k('user_account').where({ id }).first('reference_id');
  if (account) {
    const ref = String(account.reference_id);
    await h.k.raw(`DELETE FROM oidc_payload WHERE account = ? OR grant_id IN (SELECT id FROM oidc_payload WHERE model = 'Grant' AND account = ?)`, [ref, ref]);
  }
  await h.k('user_account').where({ id }).del();
});

export const removeMembership = op(async (h, accountId: number, groupId: number): Promise<boolean> => {
  return (await h.k('membership').where({ account_id: accountId, usergroup_id: groupId }).del()) > 0;
});

/**
 * The groups an account is in (its dedicated group and system groups included), by name: `direct`
 * when it is a member itself, false when only through a group inside it; `through`: the groups
 * directly inside it that the account is in (any way), by name. Two statements, whatever the depth.
 */
export const groupsOf = op(async (h, accountId: number): Promise<Array<{ reference_id: string; name: string; direct: boolean; through: string[] }>> => {
  const [rows, inner] = await Promise.all([
    h.all(
      `SELECT g.id, g.reference_id, g.name, MAX(r.direct) AS direct FROM (${memberGroupsSql('?', true)}) r JOIN usergroup g ON g.id = r.usergroup_id
         GROUP BY g.id, g.reference_id, g.name ORDER BY lower(g.name), g.id`,
      [accountId, accountId],
    ),
    h.all(
      `SELECT n.parent_id, c.name FROM usergroup_nesting n JOIN usergroup c ON c.id = n.child_id
         WHERE n.child_id IN (${memberGroupsSql('?')}) ORDER BY c.name`,
      [accountId, accountId],
    ),
  ]);
  const through = new Map<number, string[]>();
  for (const r of inner) through.set(Number(r.parent_id), [...(through.get(Number(r.parent_id)) ?? []), String(r.name)]);
  return rows.map((r) => ({
    reference_id: String(r.reference_id),
    name: String(r.name),
    direct: Number(r.direct) === 1,
    through: through.get(Number(r.id)) ?? [],
  }));
});

/** Whether any administrator exists (one indexed row, not a count: the start-up message asks). */
export const administratorExists = op(async (h): Promise<boolean> => {
  const row = await h.k('membership as m').join('usergroup as g', 'g.id', 'm.usergroup_id').where('g.system_role', 'administrators').first('m.id');
  return row !== undefined;
});

/** Another administrator than `accountId` (the oldest), or null. */
export const otherAdministrator = op(async (h, accountId: number): Promise<number | null> => {
  const row = await h
    .k('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where('g.system_role', 'administrators')
    .whereNot('m.account_id', accountId)
    .orderBy('m.id')
    .first('m.account_id');
  return row ? Number(row.account_id) : null;
});

/**
 * Whether a username is in use by an account other than `exceptId`: as its username, or as its
 * email (an LDAP `uid=ann@example.com` must name one account, whichever column it matches).
 */
export const usernameInUse = op(async (h, username: string, exceptId?: number): Promise<boolean> => {
  const rows: Array<{ id: number }> = await h.k('user_account').where({ username }).orWhere({ email_key: username }).select('id');
  return rows.some((r) => Number(r.id) !== exceptId);
});

/** The oldest account other than `exceptId` whose address has this skeleton (an indexed lookup), if any. */
export const accountWithSkeleton = op(async (h, skeleton: string, exceptId: number | null): Promise<{ id: number; email: string } | undefined> => {
  const [row] = await h.all('SELECT id, email FROM user_account WHERE email_skeleton = ? AND id <> ? ORDER BY id LIMIT 1', [skeleton, exceptId ?? 0]);
  return row ? { id: Number(row.id), email: String(row.email) } : undefined;
});

/** Whether an email (its key) is the username of an account other than `exceptId`. */
export const emailIsUsername = op(async (h, emailKey: string, exceptId?: number): Promise<boolean> => {
  const rows: Array<{ id: number }> = await h.k('user_account').where({ username: emailKey }).select('id');
  return rows.some((r) => Number(r.id) !== exceptId);
});

/** Usernames that start with `prefix` (to find a free one: ann, ann2, …): a range on the index ('~' sorts after every allowed character). */
export const usernamesLike = op(async (h, prefix: string): Promise<string[]> =>
  (await h.k('user_account').where('username', '>=', prefix).andWhere('username', '<', `${prefix}~`).select('username')).map(
    (r: { username: string }) => r.username,
  ),
);

export const findAccountByUsername = op((h, username: string) => first(h, 'username', username));

/** Sets the account's chosen language (null: as the browser asks); whether it changed. */
export const setAccountLanguage = op(async (h, accountId: number, language: string | null): Promise<boolean> => {
  const rows = await h.claim(`UPDATE user_account SET language = ?, updated_at = ? WHERE id = ? AND language IS DISTINCT FROM ? RETURNING id`, [
    language,
    h.clock.now(),
    accountId,
    language,
  ]);
  return rows.length > 0;
});
