/** Passkeys as people and the shell see them: never the public key or the credential id's bytes. */
import { AppError } from '../errors';
import { iso } from '../clock';
import type { PasskeyRow } from '../store/passkeys';

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  /** Synced to the person's other devices (a cloud keychain) rather than bound to one. */
  backed_up: boolean;
}

export const viewPasskey = (p: PasskeyRow): PasskeyView => ({
  id: p.reference_id,
  name: p.name,
  created_at: iso(p.created_at),
  last_used_at: iso(p.last_used_at),
  backed_up: p.backed_up,
});

const MAX_NAME = 100;

/** A passkey's name: trimmed, at most 100 characters, no control characters; "Passkey" when none is given. */
export function passkeyName(raw: string | undefined): string {
  const name = (raw ?? '').trim().normalize('NFC');
  if (name === '') return 'Passkey';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw new AppError('invalid_input', 'name must not contain control characters');
  if ([...name].length > MAX_NAME) throw new AppError('invalid_input', `name must be at most ${MAX_NAME} characters`);
  return name;
}
