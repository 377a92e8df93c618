/** The signing keys' operations: list, rotate, retire, and the public JWKS. */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { SIGNING_ALGS, type PublicJwk, type SigningAlg } from '../auth/keys';
import { listSigningKeys, retireSigningKey, type SigningKeyRow } from '../store/keys';
import { rotateKeys } from '../runtime/key-ring';

export interface KeyView {
  kid: string;
  alg: string;
  state: 'signing' | 'verifying' | 'retired';
  created_at: string;
  verify_until: string | null;
}

export function keyView(row: SigningKeyRow, now: number): KeyView {
  const state = row.retired_at === null ? 'signing' : row.verify_until !== null && row.verify_until > now ? 'verifying' : 'retired';
  return {
    kid: row.kid,
    alg: row.alg,
    state,
    created_at: new Date(row.created_at).toISOString(),
    verify_until: row.verify_until === null ? null : new Date(row.verify_until).toISOString(),
  };
}

export interface KeyOperations {
  list(actor: Actor): Promise<KeyView[]>;
  /** A new signing key (RS256 unless `alg` says ES256); the old one verifies until its tokens expired. */
  rotate(actor: Actor, alg?: string): Promise<{ kid: string; alg: string; retired: string[] }>;
  /** Withdraws a key that no longer signs: its tokens are refused at once, on every instance. */
  retire(actor: Actor, kid: string): Promise<KeyView>;
  /** The public keys: GET /.well-known/jwks.json. */
  jwks(): Promise<{ keys: PublicJwk[] }>;
}

export function keyOperations(s: Services): KeyOperations {
  return {
    async list(actor) {
      requireAdministrator(actor, 'list signing keys');
      return (await listSigningKeys(s.store.root)).map((k) => keyView(k, s.clock.now()));
    },
    async rotate(actor, alg = 'RS256') {
      requireAdministrator(actor, 'rotate signing keys');
      if (!SIGNING_ALGS.includes(alg as SigningAlg)) throw new AppError('invalid_input', `{--alg} must be one of ${SIGNING_ALGS.join(', ')}`);
      const r = await rotateKeys(s.store.root, s.clock, alg as SigningAlg, s.config.tokenTtl);
      await s.keys.refresh(0);
      await s.audit.record('key_rotated', actor, { account: null, kid: r.kid, alg, retired: r.retired.join(',') });
      return { kid: r.kid, alg, retired: r.retired };
    },
    async retire(actor, kid) {
      requireAdministrator(actor, 'retire signing keys');
      const row = await retireSigningKey(s.store.root, kid);
      await s.keys.refresh(0);
      await s.audit.record('key_retired', actor, { account: null, kid });
      return keyView(row, s.clock.now());
    },
    jwks: () => s.keys.jwks(),
  };
}
