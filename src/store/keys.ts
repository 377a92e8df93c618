/** Signing keys (the JWKS's private halves), the HS256 secret of stores made before them, and the instances' shared secrets. */
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import { atomically, Handle, op } from './handle';
import { decodeRow } from './schema';

export interface SigningKeyRow {
  kid: string;
  alg: string;
  private_key: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
  verify_until: number | null;
  /** The longest token lifetime (seconds) an instance signs with it; null: none recorded. */
  max_token_ttl: number | null;
}

export interface NewSigningKey {
  kid: string;
  alg: string;
  privateKey: string;
  publicJwk: string;
}

/** Every key, newest first: the first one not retired signs. */
export const listSigningKeys = op(async (h): Promise<SigningKeyRow[]> => {
  const rows = await h.k('signing_key').orderBy([
    { column: 'created_at', order: 'desc' },
    { column: 'kid', order: 'desc' },
  ]);
  return rows.map((r: Record<string, unknown>) => decodeRow<SigningKeyRow>('signing_key', r));
});

const lockKeys = (h: Handle) =>
  h
    .k('write_lock')
    .where({ name: 'signing_keys' })
    .update({ counter: h.k.raw('counter + 1') });

/** A fingerprint of the key list: it changes with every rotation, retirement and prune. */
export const keyListVersion = op(async (h): Promise<string> => {
  const rows = await h.all('SELECT kid, retired_at, verify_until FROM signing_key ORDER BY kid', []);
  return rows.map((r) => `${String(r.kid)}:${String(r.retired_at)}:${String(r.verify_until)}`).join(',');
});

/** Stores `key` as the signing key unless one exists (instances starting together make one). */
export const insertFirstSigningKey = op((root, key: NewSigningKey) =>
  atomically(root, async (h): Promise<boolean> => {
    await lockKeys(h);
    if (await h.k('signing_key').whereNull('retired_at').first('kid')) return false;
    await h.k('signing_key').insert(keyRow(key, h.clock.now()));
    return true;
  }),
);

/** `key` signs from now on; the keys before it verify until `verifyUntil`. */
/**
 * Signs with `key` from now on; each key it replaces verifies until `verifyUntil(ttl)`, given the
 * longest token lifetime recorded for it (null: none recorded).
 */
export const rotateSigningKey = op((root, key: NewSigningKey, verifyUntil: (maxTokenTtl: number | null) => number) =>
  atomically(root, async (h): Promise<string[]> => {
    await lockKeys(h);
    const now = h.clock.now();
    const previous: Array<{ kid: string; max_token_ttl: number | null }> = await h.k('signing_key').whereNull('retired_at').select('kid', 'max_token_ttl');
    for (const p of previous) {
      const ttl = p.max_token_ttl === null ? null : Number(p.max_token_ttl);
      await h
        .k('signing_key')
        .where({ kid: p.kid })
        .update({ retired_at: now, verify_until: verifyUntil(ttl) });
    }
    await h.k('signing_key').insert(keyRow(key, now));
    return previous.map((p) => String(p.kid));
  }),
);

/** Records that an instance signs tokens of `ttlSeconds` with the key `kid` (kept: the longest). */
export const recordTokenTtl = op(async (h, kid: string, ttlSeconds: number): Promise<void> => {
  await h
    .k('signing_key')
    .where({ kid })
    .andWhere((q) => q.whereNull('max_token_ttl').orWhere('max_token_ttl', '<', ttlSeconds))
    .update({ max_token_ttl: ttlSeconds });
});

/** Withdraws a key that no longer signs: its tokens are refused from now on. */
export const retireSigningKey = op((root, kid: string) =>
  atomically(root, async (h): Promise<SigningKeyRow> => {
    await lockKeys(h);
    const found = await h.k('signing_key').where({ kid }).first();
    if (!found) throw new AppError('not_found', `no signing key ${kid.slice(0, 64)}`);
    const row = decodeRow<SigningKeyRow>('signing_key', found);
    if (row.retired_at === null) throw new AppError('invalid_input', `${kid} signs new tokens: rotate first, then retire it`);
    const now = h.clock.now();
    if (row.verify_until === null || row.verify_until > now) await h.k('signing_key').where({ kid }).update({ verify_until: now });
    return { ...row, verify_until: Math.min(row.verify_until ?? now, now) };
  }),
);

/** Drops keys that stopped verifying more than `keepMs` ago. */
export const pruneSigningKeys = op(async (h, keepMs: number): Promise<void> => {
  await h
    .k('signing_key')
    .whereNotNull('verify_until')
    .where('verify_until', '<', h.clock.now() - keepMs)
    .del();
});

/** Deletes the HS256 secret of an upgraded store once nothing it signed can be valid (`lifetimeMs` after the upgrade). */
export const pruneLegacySecret = op(async (h, lifetimeMs: number): Promise<void> => {
  const [row] = await h.k('gatehouse_setting').where({ name: 'jwt_secret_issued_before' }).select('value');
  if (!row || Number(row.value) + lifetimeMs >= h.clock.now()) return;
  await h.k('gatehouse_setting').whereIn('name', ['jwt_secret', 'jwt_secret_issued_before']).del();
});

/** The HS256 secret of a store upgraded from it, and the time before which its tokens were issued. */
export const legacySecret = op(async (h): Promise<{ secret: Buffer; issuedBefore: number } | null> => {
  const rows: Array<{ name: string; value: string }> = await h.k('gatehouse_setting').whereIn('name', ['jwt_secret', 'jwt_secret_issued_before']);
  const get = (name: string) => rows.find((r) => r.name === name)?.value;
  const secret = get('jwt_secret');
  const before = get('jwt_secret_issued_before');
  if (secret === undefined || before === undefined) return null;
  return { secret: Buffer.from(String(secret), 'base64'), issuedBefore: Number(before) };
});

function keyRow(key: NewSigningKey, now: number) {
  return {
    kid: key.kid,
    alg: key.alg,
    private_key: key.privateKey,
    public_jwk: key.publicJwk,
    created_at: now,
    retired_at: null,
    verify_until: null,
    max_token_ttl: null,
  };
}

/**
 * A secret the instances share, made once (the first instance's insert wins, the others read it)
 * and never changed: the provider's cookie key, the SAML pseudonym key.
 */
export const sharedSecret = op(async (h, name: 'oidc_cookie_key' | 'saml_pseudonym_key'): Promise<string> => {
  const read = async () => (await h.k('gatehouse_setting').where({ name }).first('value'))?.value as string | undefined;
  const existing = await read();
  if (existing) return existing;
  await h
    .k('gatehouse_setting')
    .insert({ name, value: randomBytes(32).toString('base64url') })
    .onConflict('name')
    .ignore();
  return (await read())!;
});
