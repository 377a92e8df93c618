/**
 * Mailed sign-in codes (accounts/mail-signin.ts): one row per request, only hashes kept. Each
 * code typed first takes one of the request's five tries by a conditional UPDATE (a burst of
 * guesses sent at once: five are looked at), and a right one gives it back; spending it is another,
 * whose row count decides (four requests at once with the right code: one wins).
 */
import { createHash } from 'node:crypto';
import { op } from './handle';
import { decodeRow } from './schema';

export const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** Wrong codes a request takes; the next one ends it. */
export const MAIL_CODE_TRIES = 5;

export interface MailCodeRow {
  id: number;
  handle_hash: string;
  binding_hash: string;
  code_hash: string;
  email_key: string;
  account_id: number | null;
  tries: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export const insertMailCode = op(
  async (h, row: Pick<MailCodeRow, 'handle_hash' | 'binding_hash' | 'code_hash' | 'email_key' | 'account_id' | 'expires_at'>): Promise<void> => {
    await h.k('mail_code').insert({ ...row, tries: 0, created_at: h.clock.now(), used_at: null });
  },
);

/** The request a handle names, for the browser whose cookie hashes to `bindingHash`; spent or not. */
export const findMailCode = op(async (h, handleHash: string): Promise<MailCodeRow | undefined> => {
  const row = await h.k('mail_code').where({ handle_hash: handleHash }).first();
  return row ? decodeRow<MailCodeRow>('mail_code', row) : undefined;
});

/** Takes one of a live request's tries: false when it has none left (or was spent, or expired), and then no code is looked at. */
export const takeMailCodeTry = op(async (h, id: number): Promise<boolean> => {
  const changed = await h
    .k('mail_code')
    .where({ id })
    .whereNull('used_at')
    .where('expires_at', '>', h.clock.now())
    .where('tries', '<', MAIL_CODE_TRIES)
    .update({ tries: h.k.raw('tries + 1') });
  return changed === 1;
});

/** Gives back the try a right code took (its second factor may still be missing or wrong: the code stays as good as it was). */
export const giveBackMailCodeTry = op(async (h, id: number): Promise<void> => {
  await h
    .k('mail_code')
    .where({ id })
    .where('tries', '>', 0)
    .update({ tries: h.k.raw('tries - 1') });
});

/** Spends a live request whose code hashes to `codeHash`, for its browser: true for the one write that did. */
export const spendMailCode = op(async (h, id: number, bindingHash: string, codeHash: string): Promise<boolean> => {
  const now = h.clock.now();
  const changed = await h
    .k('mail_code')
    .where({ id, binding_hash: bindingHash, code_hash: codeHash })
    .whereNotNull('account_id')
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now });
  return changed === 1;
});
