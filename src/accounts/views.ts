/** Accounts as the shell shows them: public fields only, never a hash or secret. */
import type { Services } from '../services';
import { AccountRow, isAdministrator, listAccounts } from '../store/accounts';

export interface AccountView {
  reference_id: string;
  email: string;
  username: string;
  name: string;
  administrator: boolean;
  disabled: boolean;
  email_verified: boolean;
  totp_enabled: boolean;
  created_at: string;
}

/** An account row read with its administrator flag. */
export const viewOf = (a: AccountRow & { administrator: boolean }): AccountView => view(a, a.administrator);

const view = (a: AccountRow, administrator: boolean): AccountView => ({
  reference_id: a.reference_id,
  email: a.email,
  username: a.username,
  name: a.name,
  administrator,
  disabled: a.disabled,
  email_verified: a.email_verified,
  totp_enabled: a.totp_enabled,
  created_at: new Date(a.created_at).toISOString(),
});

export async function viewAccount(s: Services, account: AccountRow): Promise<AccountView> {
  return view(account, await isAdministrator(s.store.root, account.id));
}

export async function listAccountViews(s: Services): Promise<AccountView[]> {
  return (await listAccounts(s.store.root)).map((a) => view(a, a.administrator));
}
