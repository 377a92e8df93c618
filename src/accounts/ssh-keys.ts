/**
 * An account's SSH public keys and login shell (contract section 25), which the directory serves
 * to Linux hosts. A key is a way in to every host that reads the directory: adding one needs a
 * recent sign-in (recent-signin.ts, checked in the transaction that stores it), at most 20 per
 * account, and every add and remove is audited and told to the person by mail (queued in the same
 * transaction). The owner manages their own (the account page); administrators and the shell any
 * account's, by email.
 */
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import { requireAdministrator } from '../access/caller';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { deleteSshKey, insertSshKey, listSshKeys, setLoginShell, type SshKeyRow } from '../store/ssh-keys';
import { queueMail } from '../deliveries/queue';
import { sshKeyMessage } from '../mail/messages';
import { accountTranslator } from '../i18n';
import { ownAccount } from './acting';
import { assertRecentSignin } from './recent-signin';
import { parseSshPublicKey } from './ssh-key-format';
import { DEFAULT_SHELL, parseShell } from './posix';
import { findAccountByEmail } from './lifecycle';

export const MAX_SSH_KEYS = 20;

export interface SshKeyView {
  id: string;
  type: string;
  /** ED25519, ECDSA P-256, RSA 4096… */
  description: string;
  fingerprint: string;
  comment: string;
  created_at: string;
  /** The line as authorized_keys holds it. */
  line: string;
}

export function sshKeyView(r: SshKeyRow): SshKeyView {
  const parsed = parseSshPublicKey(`${r.key_type} ${r.key_data}`);
  return {
    id: r.reference_id,
    type: r.key_type,
    description: parsed.description,
    fingerprint: r.fingerprint,
    comment: r.comment,
    created_at: new Date(r.created_at).toISOString(),
    line: `${r.key_type} ${r.key_data}${r.comment ? ` ${r.comment}` : ''}`,
  };
}

export interface SshKeyOperations {
  /** Any account's (an administrator or the shell), by email. */
  add(actor: Actor, email: string, key: string): Promise<SshKeyView>;
  list(actor: Actor, email: string): Promise<SshKeyView[]>;
  remove(actor: Actor, email: string, id: string): Promise<SshKeyView>;
  /** The login shell the directory serves (null or empty: the default, /bin/bash); whether it changed. */
  setShell(actor: Actor, email: string, shell: string | null): Promise<{ shell: string; changed: boolean }>;
  /** The caller's own. */
  addMine(caller: Caller, key: string): Promise<SshKeyView>;
  listMine(caller: Caller): Promise<SshKeyView[]>;
  removeMine(caller: Caller, id: string): Promise<SshKeyView>;
  setShellMine(caller: Caller, shell: string | null): Promise<{ shell: string; changed: boolean }>;
  /** The caller's shell as the directory serves it. */
  shellMine(caller: Caller): Promise<string>;
}

export function sshKeyOperations(s: Services): SshKeyOperations {
  const other = async (actor: Actor, email: string, what: string) => {
    requireAdministrator(actor, what);
    return findAccountByEmail(s, email);
  };
  const add = async (actor: Actor, account: AccountRow, text: string): Promise<SshKeyView> => {
    if (typeof text !== 'string') throw new AppError('invalid_input', '{--key} must be a string');
    const key = parseSshPublicKey(text);
    const row = await s.store.transaction(async (tx) => {
      // A new way in: the rule holds at the write, read in its transaction.
      await assertRecentSignin(s, actor, { tx });
      const made = await insertSshKey(tx, account.id, key, MAX_SSH_KEYS);
      if ('refused' in made) {
        if (made.refused === 'full') throw new AppError('conflict', `an account has at most ${MAX_SSH_KEYS} SSH keys; remove one first`);
        throw new AppError('conflict', `this key (${key.fingerprint}) is already on the account`);
      }
      await queueMail(tx, sshKeyMessage(account.email, account.name, 'added', key, accountTranslator(s.messages, account)), 'ssh_key');
      return made.row;
    });
    await s.audit.record('ssh_key_added', actor, { account: account.reference_id, ssh_key: row.reference_id, fingerprint: row.fingerprint });
    return sshKeyView(row);
  };
  const list = async (account: AccountRow) => (await listSshKeys(s.store.root, account.id)).map(sshKeyView);
  const remove = async (actor: Actor, account: AccountRow, id: string): Promise<SshKeyView> => {
    if (typeof id !== 'string' || id.length > 100) throw new AppError('invalid_input', '{--id} must be an SSH key id');
    const row = await s.store.transaction(async (tx) => {
      const gone = await deleteSshKey(tx, account.id, id.trim().toLowerCase());
      if (!gone) throw new AppError('not_found', `no SSH key ${id.slice(0, 60)} on this account`);
      const view = sshKeyView(gone);
      await queueMail(tx, sshKeyMessage(account.email, account.name, 'removed', view, accountTranslator(s.messages, account)), 'ssh_key');
      return gone;
    });
    await s.audit.record('ssh_key_removed', actor, { account: account.reference_id, ssh_key: row.reference_id, fingerprint: row.fingerprint });
    return sshKeyView(row);
  };
  const setShell = async (actor: Actor, account: AccountRow, raw: string | null) => {
    const shell = raw === null || (typeof raw === 'string' && raw.trim() === '') ? null : parseShell(raw);
    const changed = await setLoginShell(s.store.root, account.id, shell);
    if (changed) await s.audit.record('login_shell_changed', actor, { account: account.reference_id, shell: shell ?? DEFAULT_SHELL });
    return { shell: shell ?? DEFAULT_SHELL, changed };
  };

  return {
    add: async (actor, email, key) => add(actor, await other(actor, email, 'add SSH keys to other accounts'), key),
    list: async (actor, email) => list(await other(actor, email, "read other accounts' SSH keys")),
    remove: async (actor, email, id) => remove(actor, await other(actor, email, "remove other accounts' SSH keys"), id),
    setShell: async (actor, email, shell) => setShell(actor, await other(actor, email, "set other accounts' login shells"), shell),
    async addMine(caller, key) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      return add(actor, account, key);
    },
    listMine: async (caller) => list((await ownAccount(s, caller, { change: false })).account),
    async removeMine(caller, id) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      return remove(actor, account, id);
    },
    async setShellMine(caller, shell) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      return setShell(actor, account, shell);
    },
    shellMine: async (caller) => (await ownAccount(s, caller, { change: false })).account.login_shell ?? DEFAULT_SHELL,
  };
}
