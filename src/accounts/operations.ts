/**
 * The accounts domain's operations, as the front ends call them: create, list and change
 * accounts (administrators and the shell), and a caller's own pending TOTP enrolment.
 */
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { actorOf, requireAdministrator } from '../access/caller';
import { findAccountById, findAccountByReference, groupsOf, searchAccounts } from '../store/accounts';
import { AppError } from '../errors';
import { isReference } from '../store/reference';
import { mailVerification } from './mailed-links';
import { makeRecoveryLink, openRecoveryLink } from './recovery';
import { totpUri } from '../auth/totp';
import { bootstrapAdmin, BootstrapOutcome } from './bootstrap';
import { createAccount, newAccountFrom } from './create';
import { demote, findAccountByEmail, promote, resetTotp, revokeSessions, setDisabled, setPassword, setUsername, unlockAccount } from './lifecycle';
import { AccountView, listAccountViews, viewAccount, viewOf } from './views';
import { listSessions, revokeSession, SessionView } from './sessions';
import { appPasswordOperations, type AppPasswordOperations } from './app-passwords';
import { apiKeyOperations, type ApiKeyOperations } from './api-keys';
import { deleteAccountByEmail } from './delete';
import { sshKeyOperations, type SshKeyOperations } from './ssh-keys';
import { languageOperations, type LanguageOperations } from './language';

/** Operator input for a new account (passwords never come from arguments). */
export interface AccountInput {
  email: string;
  name?: string;
  password: string;
  /** Made even when its address looks like another account's (the shell's --allow-lookalike). */
  allowLookalike?: boolean;
}

type Changed = Promise<{ account: AccountView; changed: boolean }>;

export interface AccountOperations {
  bootstrapAdmin(actor: Actor, input: AccountInput): Promise<{ outcome: BootstrapOutcome; referenceId: string }>;
  create(actor: Actor, input: AccountInput): Promise<AccountView>;
  list(actor: Actor): Promise<AccountView[]>;
  show(actor: Actor, email: string): Promise<AccountView>;
  setDisabled(actor: Actor, email: string, disabled: boolean): Changed;
  setPassword(actor: Actor, email: string, password: string): Promise<AccountView>;
  /** A new username (unique; the LDAP uid and OIDC's preferred_username). */
  setUsername(actor: Actor, email: string, username: string): Changed;
  revokeSessions(actor: Actor, email: string): Promise<AccountView>;
  unlock(actor: Actor, email: string): Promise<{ account: AccountView; unlocked: boolean }>;
  resetTotp(actor: Actor, email: string): Changed;
  promote(actor: Actor, email: string): Changed;
  demote(actor: Actor, email: string): Changed;
  /** The caller's TOTP enrolment in progress (enrolled, not yet confirmed), or null. */
  pendingTotp(caller: Caller): Promise<{ secret: string; uri: string } | null>;
  /** The account's open sessions, newest first. */
  sessions(actor: Actor, email: string): Promise<{ account: AccountView; sessions: SessionView[] }>;
  /** Ends one session: its tokens are refused on the next request, on every instance. */
  revokeSession(actor: Actor, email: string, sessionId: string): Promise<AccountView>;
  /** A one-time recovery link for the account (an administrator's): 15 minutes to add a passkey or a password once opened. */
  recoveryLink(actor: Actor, email: string, ttlSeconds?: number): Promise<{ link: string; expires_at: string }>;
  /** Opens a recovery link (the page): its session's tokens. */
  openRecovery(caller: Caller, token: string): Promise<{ token: string; refreshToken: string }>;
  /**
   * A page of accounts, newest first, whose email or name holds `q` (the console): `after` is the
   * last reference_id of the page before; `next` the cursor of the page after, or null.
   */
  search(actor: Actor, o: { q?: string; after?: string; limit?: number }): Promise<{ accounts: AccountView[]; next: string | null }>;
  /** One account by its reference_id (the console's addresses). */
  byReference(actor: Actor, referenceId: string): Promise<AccountView>;
  /** The groups an account is in, by name (its own dedicated group included), for the console. */
  /** Every group the account is in: `direct` when it is a member itself; `through`: the groups directly inside it the account is in. */
  groupsOf(actor: Actor, referenceId: string): Promise<Array<{ reference_id: string; name: string; direct: boolean; through: string[] }>>;
  /**
   * Deletes an account and everything hanging off it (accounts/delete.ts): never the last
   * administrator; one a directory source or a SCIM client manages only with `force`.
   */
  delete(actor: Actor, email: string, o?: { force?: boolean }): Promise<{ reference_id: string; email: string }>;
  /** Mails the account a new verification link (an administrator's "resend"). */
  sendVerification(actor: Actor, email: string): Promise<AccountView>;
  /** App passwords (for LDAP binds): any account's, and the caller's own. */
  readonly appPasswords: AppPasswordOperations;
  /** API keys (for scripts on the HTTP API): any account's, by an administrator or the shell. */
  readonly apiKeys: ApiKeyOperations;
  /** SSH public keys and the login shell the directory serves to Linux hosts: any account's, and the caller's own. */
  readonly ssh: SshKeyOperations;
  /** The language the caller chose for pages and mails. */
  readonly language: LanguageOperations;
}

const MAX_SEARCH = 100;

export function accountOperations(s: Services): AccountOperations {
  const view = async (email: string) => viewAccount(s, await findAccountByEmail(s, email));
  /** A state change's answer for the shell: the account as it is now, and whether anything changed. */
  const changed = async (email: string, change: Promise<{ changed: boolean }>) => ({ changed: (await change).changed, account: await view(email) });
  return {
    bootstrapAdmin: (actor, input) => bootstrapAdmin(s, actor, input),
    appPasswords: appPasswordOperations(s, (email) => findAccountByEmail(s, email)),
    apiKeys: apiKeyOperations(s, (email) => findAccountByEmail(s, email)),
    ssh: sshKeyOperations(s),
    language: languageOperations(s),
    async create(actor, input) {
      requireAdministrator(actor, 'create accounts from here');
      const created = await createAccount(s, actor, newAccountFrom(input, s.config.passwordMinLength), undefined, {
        lookalike: { allow: input.allowLookalike === true, flag: '{--allow-lookalike}' },
      });
      return view(created.email);
    },
    async list(actor) {
      requireAdministrator(actor, 'list accounts');
      return listAccountViews(s);
    },
    async show(actor, email) {
      requireAdministrator(actor, 'read accounts');
      return view(email);
    },
    setDisabled: (actor, email, disabled) => changed(email, setDisabled(s, actor, email, disabled)),
    setUsername: (actor, email, username) => changed(email, setUsername(s, actor, email, username)),
    async setPassword(actor, email, password) {
      await setPassword(s, actor, email, password);
      return view(email);
    },
    async revokeSessions(actor, email) {
      requireAdministrator(actor, 'end sessions of other accounts');
      await revokeSessions(s, actor, await findAccountByEmail(s, email));
      return view(email);
    },
    async unlock(actor, email) {
      const r = await unlockAccount(s, actor, email);
      return { account: await view(email), unlocked: r.unlocked };
    },
    resetTotp: (actor, email) => changed(email, resetTotp(s, actor, email)),
    delete: (actor, email, o) => deleteAccountByEmail(s, actor, email, o),
    promote: (actor, email) => changed(email, promote(s, actor, email)),
    demote: (actor, email) => changed(email, demote(s, actor, email)),
    async pendingTotp(caller) {
      const { principal } = await actorOf(s, caller);
      const account = principal.accountId === null ? undefined : await findAccountById(s.store.root, principal.accountId);
      if (!account || account.totp_enabled || !account.totp_secret) return null;
      return { secret: account.totp_secret, uri: totpUri(account.totp_secret, account.email) };
    },
    async sessions(actor, email) {
      requireAdministrator(actor, 'list the sessions of other accounts');
      const account = await findAccountByEmail(s, email);
      return { account: await viewAccount(s, account), sessions: await listSessions(s, account.id, actor.session) };
    },
    async search(actor, o) {
      requireAdministrator(actor, 'list accounts');
      const limit = o.limit ?? 25;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH) throw new AppError('invalid_input', `limit must be 1 to ${MAX_SEARCH}`);
      const q = (o.q ?? '').trim();
      if (q.length > 200) throw new AppError('invalid_input', 'the search is at most 200 characters');
      let beforeId: number | undefined;
      if (o.after) {
        const last = isReference(o.after) ? await findAccountByReference(s.store.root, o.after.toLowerCase()) : undefined;
        if (!last) throw new AppError('invalid_input', 'that page is gone (the account it began after was deleted); start from the first page');
        beforeId = last.id;
      }
      // One row more than the page: whether a next page exists, without counting a million rows.
      const rows = await searchAccounts(s.store.root, { q: q || undefined, beforeId, limit: limit + 1 });
      const page = rows.slice(0, limit);
      return { accounts: page.map(viewOf), next: rows.length > limit ? page[page.length - 1].reference_id : null };
    },
    async byReference(actor, referenceId) {
      requireAdministrator(actor, 'read accounts');
      const account = isReference(referenceId) ? await findAccountByReference(s.store.root, referenceId.toLowerCase()) : undefined;
      if (!account) throw new AppError('not_found', 'no such account');
      return viewAccount(s, account);
    },
    async groupsOf(actor, referenceId) {
      requireAdministrator(actor, 'read accounts');
      const account = isReference(referenceId) ? await findAccountByReference(s.store.root, referenceId.toLowerCase()) : undefined;
      if (!account) throw new AppError('not_found', 'no such account');
      return groupsOf(s.store.root, account.id);
    },
    async sendVerification(actor, email) {
      requireAdministrator(actor, 'send verification links to other accounts');
      const account = await findAccountByEmail(s, email);
      if (account.email_verified) throw new AppError('conflict', 'this address is confirmed already');
      await mailVerification(s, account);
      await s.audit.record('verification_resent', actor, { account: account.reference_id });
      return viewAccount(s, account);
    },
    async revokeSession(actor, email, sessionId) {
      requireAdministrator(actor, 'end sessions of other accounts');
      const account = await findAccountByEmail(s, email);
      await revokeSession(s, actor, account.id, sessionId);
      return viewAccount(s, account);
    },
    recoveryLink: (actor, email, ttl) => makeRecoveryLink(s, actor, email, ttl),
    openRecovery: async (caller, token) => openRecoveryLink(s, await actorOf(s, { ...caller, token: null }), token),
  };
}
