/**
 * Recovery of an account that lost its only way in (a passkey-only account whose device is
 * gone): an administrator makes a one-time link (`gatehouse user recovery-link`, the console).
 * Opening it spends it (one conditional write: a replay is refused) and opens a session whose
 * only power, for 15 minutes, is to add a passkey or a password (recent-signin.ts); it ends then
 * too. Made and used, audited; the person is told by mail when it is used.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { issueToken } from '../store/account-tokens';
import { queueMail } from '../deliveries/queue';
import { recoveryUsedMessage } from '../mail/messages';
import { accountTranslator } from '../i18n';
import { findAccountByEmail } from './lifecycle';
import { checkTokenShape, redeemToken } from './one-time-tokens';
import { openSession } from './sessions';
import { RECOVERY_WINDOW_MS } from './recent-signin';

export const RECOVERY_DEFAULT_TTL_S = 24 * 3600;
const RECOVERY_MAX_TTL_S = 7 * 24 * 3600;

/** Makes a recovery link for the account with `email`: the link (only ever shown to the administrator who made it). */
export async function makeRecoveryLink(
  s: Services,
  actor: Actor,
  email: string,
  ttlSeconds = RECOVERY_DEFAULT_TTL_S,
): Promise<{ link: string; expires_at: string }> {
  requireAdministrator(actor, 'make recovery links');
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 60 || ttlSeconds > RECOVERY_MAX_TTL_S) throw new AppError('invalid_input', '{--expires} is from 1m to 7d');
  const account = await findAccountByEmail(s, email);
  if (account.disabled) throw new AppError('invalid_input', 'this account is disabled: enable it first');
  const token = await issueToken(s.store.root, account.id, 'recovery', account.email_key, ttlSeconds);
  await s.audit.record('recovery_link_made', actor, { account: account.reference_id });
  return { link: `${s.config.publicUrl}/recover#token=${token}`, expires_at: new Date(s.clock.now() + ttlSeconds * 1000).toISOString() };
}

/** Opens a recovery link: spent once, then a session for 15 minutes that may add a passkey or a password. */
export async function openRecoveryLink(s: Services, actor: Actor, token: string): Promise<{ token: string; refreshToken: string }> {
  checkTokenShape(token, 'recovery');
  const account = await redeemToken(s, token, 'recovery');
  if (account.disabled) throw new AppError('forbidden', 'this account is disabled', { reason: 'account_disabled' });
  const session = await openSession(s, actor, account, {
    method: 'recovery',
    twoFactor: false,
    secondFactor: null,
    upstreamAmr: [],
    lifetimeMs: RECOVERY_WINDOW_MS,
  });
  await s.audit.record('recovery_link_used', actor, { account: account.reference_id });
  await s.store.transaction((tx) =>
    queueMail(tx, recoveryUsedMessage(account.email, account.name, RECOVERY_WINDOW_MS / 1000, accountTranslator(s.messages, account)), 'recovery_used'),
  );
  s.sender.nudge();
  return { token: session.token, refreshToken: session.refreshToken };
}
