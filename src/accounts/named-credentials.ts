/**
 * An account's named secrets (app passwords for LDAP binds, API keys for scripts): the one home
 * of what they share. Each is made for one purpose and named for it, shown once, kept as a hash,
 * listed (never the secret), and revoked one by one; at most 50 per account. The owner manages
 * their own (the account page); administrators and the shell any account's, by email. Adding and
 * revoking are audited (`<kind>_added`, `<kind>_revoked`).
 */
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import { requireAdministrator } from '../access/caller';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { ownAccount } from './acting';
import { validateName } from './validate';

/** At most this many per account: one per app or script, not one per login or run. */
const MAX_PER_ACCOUNT = 50;

/** One kind of named secret: how it is stored and shown. */
export interface CredentialKind<Row, View, Input extends { name: string }> {
  /** As events and fields name it: `app_password`, `api_key`. */
  readonly event: 'app_password' | 'api_key';
  /** As people read it: "app password", "API key". */
  readonly noun: string;
  /** Refuses an input the kind cannot take (beyond the name), before anything is stored. */
  check?(account: AccountRow, input: Input): void;
  insert(s: Services, account: AccountRow, input: Input & { name: string }): Promise<{ row: Row; secret: string }>;
  list(s: Services, account: AccountRow): Promise<Row[]>;
  remove(s: Services, account: AccountRow, id: string): Promise<boolean>;
  view(row: Row): View & { id: string };
}

export interface CredentialOperations<View, Input> {
  add(actor: Actor, email: string, input: Input): Promise<{ view: View; secret: string }>;
  list(actor: Actor, email: string): Promise<View[]>;
  revoke(actor: Actor, email: string, id: string): Promise<void>;
  addMine(caller: Caller, input: Input): Promise<{ view: View; secret: string }>;
  listMine(caller: Caller): Promise<View[]>;
  revokeMine(caller: Caller, id: string): Promise<void>;
}

export function credentialOperations<Row, View, Input extends { name: string }>(
  s: Services,
  byEmail: (email: string) => Promise<AccountRow>,
  kind: CredentialKind<Row, View, Input>,
): CredentialOperations<View, Input> {
  const other = async (actor: Actor, email: string) => {
    requireAdministrator(actor, `manage other accounts' ${kind.noun}s`);
    return byEmail(email);
  };
  const add = async (actor: Actor, account: AccountRow, input: Input) => {
    const name = validateName(input.name);
    kind.check?.(account, input);
    if ((await kind.list(s, account)).length >= MAX_PER_ACCOUNT) {
      throw new AppError('conflict', `an account has at most ${MAX_PER_ACCOUNT} ${kind.noun}s; revoke one first`);
    }
    const { row, secret } = await kind.insert(s, account, { ...input, name });
    const view = kind.view(row);
    await s.audit.record(`${kind.event}_added`, actor, { account: account.reference_id, [kind.event]: view.id });
    return { view, secret };
  };
  const list = async (account: AccountRow) => (await kind.list(s, account)).map((r) => kind.view(r));
  const revoke = async (actor: Actor, account: AccountRow, id: string) => {
    if (!(await kind.remove(s, account, id))) throw new AppError('not_found', `no ${kind.noun} ${id.slice(0, 60)} for this account`);
    await s.audit.record(`${kind.event}_revoked`, actor, { account: account.reference_id, [kind.event]: id });
  };
  return {
    add: async (actor, email, input) => add(actor, await other(actor, email), input),
    list: async (actor, email) => list(await other(actor, email)),
    revoke: async (actor, email, id) => revoke(actor, await other(actor, email), id),
    async addMine(caller, input) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      return add(actor, account, input);
    },
    listMine: async (caller) => list((await ownAccount(s, caller, { change: false })).account),
    async revokeMine(caller, id) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      await revoke(actor, account, id);
    },
  };
}
