/**
 * The ways into an account (a password, passkeys, identities linked at other providers) and the
 * one rule about them: an account always keeps one. Every removal of a credential asks here,
 * inside the transaction that removes it, so two removals racing cannot both take "one of two".
 */
import { AppError } from '../errors';
import { type AccountRow, NO_PASSWORD } from '../store/accounts';
import type { Tx } from '../store/connection';
import { countPasskeys } from '../store/passkeys';
import { countIdentities } from '../store/upstream';

export { NO_PASSWORD };

export const hasPassword = (account: Pick<AccountRow, 'password'>): boolean => account.password !== NO_PASSWORD;

/** Whether the account has a second factor to be asked for: TOTP, or a passkey (each verifies its user). */
export async function hasSecondFactor(tx: Tx, account: Pick<AccountRow, 'id' | 'totp_enabled'>): Promise<boolean> {
  return account.totp_enabled || (await countPasskeys(tx, account.id)) > 0;
}

export interface WaysIn {
  password: boolean;
  passkeys: number;
  identities: number;
}

export async function waysIn(tx: Tx, account: Pick<AccountRow, 'id' | 'password'>): Promise<WaysIn> {
  return { password: hasPassword(account), passkeys: await countPasskeys(tx, account.id), identities: await countIdentities(tx, account.id) };
}

const LAST: Record<'passkey' | 'identity', string> = {
  passkey: 'this is the only way to sign in to the account: set a password first (a reset link sets one)',
  identity: 'this is the only way to sign in to the account: add a passkey or set a password first',
};

/** Refuses (409 last_credential) to remove an account's last way in. Call it in the removing transaction. */
export async function assertKeepsAWayIn(tx: Tx, account: Pick<AccountRow, 'id' | 'password'>, removing: 'passkey' | 'identity'): Promise<void> {
  const w = await waysIn(tx, account);
  if ((w.password ? 1 : 0) + w.passkeys + w.identities <= 1) throw new AppError('last_credential', LAST[removing]);
}
