/** Passkeys (WebAuthn credentials) and the challenges of ceremonies in progress. */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors';
import { isUniqueViolation, op } from './handle';
import { decodeRow } from './schema';

export interface PasskeyRow {
  id: number;
  reference_id: string;
  account_id: number;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string;
  name: string;
  backed_up: boolean;
  created_at: number;
  last_used_at: number | null;
}

export type ChallengePurpose = 'signin' | 'register' | 'signup';

export interface ChallengeRow {
  challenge: string;
  purpose: ChallengePurpose;
  account_id: number | null;
  pending: string | null;
  expires_at: number;
}

export const passkeysOf = op(async (h, accountId: number): Promise<PasskeyRow[]> =>
  (await h.k('passkey').where({ account_id: accountId }).orderBy('id')).map((r: Record<string, unknown>) => decodeRow<PasskeyRow>('passkey', r)),
);

export const countPasskeys = op(async (h, accountId: number): Promise<number> => {
  const row = await h.k('passkey').where({ account_id: accountId }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
});

export const findPasskeyByCredential = op(async (h, credentialId: string): Promise<PasskeyRow | undefined> => {
  const [raw] = await h.all('SELECT * FROM passkey WHERE credential_id = ?', [credentialId]);
  return raw ? decodeRow<PasskeyRow>('passkey', raw) : undefined;
});

export const insertPasskey = op(async (h, p: Omit<PasskeyRow, 'id' | 'reference_id' | 'created_at' | 'last_used_at'>): Promise<PasskeyRow> => {
  const row = { ...p, reference_id: randomUUID(), created_at: h.clock.now(), last_used_at: null };
  try {
    await h.k('passkey').insert(row);
  } catch (err) {
    // One credential, one account: the unique index decides a race of two registrations.
    if (isUniqueViolation(err)) throw new AppError('conflict', 'this passkey is registered already');
    throw err;
  }
  return decodeRow<PasskeyRow>('passkey', (await h.k('passkey').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
});

/**
 * Records a use: moves the counter forward only if no other sign-in moved it past this one
 * meanwhile (two assertions racing with one counter value: one wins). False when it lost.
 */
export const usePasskey = op(async (h, id: number, previous: number, next: number): Promise<boolean> => {
  const now = h.clock.now();
  return (await h.k('passkey').where({ id, counter: previous }).update({ counter: next, last_used_at: now })) === 1;
});

export const deletePasskey = op(async (h, accountId: number, referenceId: string): Promise<boolean> => {
  return (await h.k('passkey').where({ account_id: accountId, reference_id: referenceId }).del()) === 1;
});

export const countLiveChallenges = op(async (h): Promise<number> => {
  const row = await h.k('webauthn_challenge').where('expires_at', '>', h.clock.now()).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
});

export const insertChallenge = op(async (h, row: ChallengeRow): Promise<void> => {
  // Expired ones are swept as new ones arrive: the table holds only ceremonies in progress.
  await h.k('webauthn_challenge').where('expires_at', '<=', h.clock.now()).del();
  await h.k('webauthn_challenge').insert(row);
});

/**
 * Spends a challenge of this purpose: the one caller that deletes it gets its row; a replay, an
 * expired challenge or one made for another purpose gets undefined.
 */
export const spendChallenge = op(async (h, challenge: string, purpose: ChallengePurpose): Promise<ChallengeRow | undefined> => {
  const raw = await h.k('webauthn_challenge').where({ challenge, purpose }).first();
  if (!raw) return undefined;
  const deleted = await h.k('webauthn_challenge').where({ challenge, purpose }).del();
  if (deleted !== 1) return undefined;
  const row = decodeRow<ChallengeRow>('webauthn_challenge', raw);
  return row.expires_at > h.clock.now() ? row : undefined;
});
