/** Invitations: who was invited, to which groups, and whether the invitation is still open. */
import { randomUUID } from 'node:crypto';
import { op } from './handle';
import { decodeRow } from './schema';

export interface InvitationRow {
  id: number;
  reference_id: string;
  email: string;
  email_key: string;
  token_hash: string;
  groups: string;
  administrator: boolean;
  created_by: number | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  account_id: number | null;
}

const decode = (r: Record<string, unknown>) => decodeRow<InvitationRow>('invitation', r);

export const insertInvitation = op(
  async (
    h,
    i: Pick<InvitationRow, 'email' | 'email_key' | 'token_hash' | 'groups' | 'administrator' | 'created_by' | 'expires_at'>,
  ): Promise<InvitationRow> => {
    const row = { ...i, reference_id: randomUUID(), created_at: h.clock.now(), used_at: null, revoked_at: null, account_id: null };
    await h.k('invitation').insert(row);
    return decode((await h.k('invitation').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
  },
);

/** Open invitations (neither used, revoked nor expired), newest first. */
export const openInvitations = op(async (h): Promise<InvitationRow[]> =>
  (await h.k('invitation').whereNull('used_at').whereNull('revoked_at').where('expires_at', '>', h.clock.now()).orderBy('id', 'desc')).map(decode),
);

export const findInvitationByToken = op(async (h, tokenHash: string): Promise<InvitationRow | undefined> => {
  const row = await h.k('invitation').where({ token_hash: tokenHash }).first();
  return row ? decode(row) : undefined;
});

export const findInvitation = op(async (h, referenceId: string): Promise<InvitationRow | undefined> => {
  const row = await h.k('invitation').where({ reference_id: referenceId }).first();
  return row ? decode(row) : undefined;
});

/** Revokes an open invitation: false if it was used, revoked or expired already. */
export const revokeInvitation = op(async (h, id: number): Promise<boolean> => {
  const now = h.clock.now();
  return (await h.k('invitation').where({ id }).whereNull('used_at').whereNull('revoked_at').where('expires_at', '>', now).update({ revoked_at: now })) === 1;
});

/** Spends an open invitation for the account it made: false for the loser of a race (or a closed one). */
export const spendInvitation = op(async (h, id: number, accountId: number): Promise<boolean> => {
  const now = h.clock.now();
  return (
    (await h
      .k('invitation')
      .where({ id })
      .whereNull('used_at')
      .whereNull('revoked_at')
      .where('expires_at', '>', now)
      .update({ used_at: now, account_id: accountId })) === 1
  );
});
