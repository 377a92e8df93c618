/**
 * The key ring: the key that signs, the keys that verify (by `kid`), and the HS256 secret of a
 * store made before asymmetric keys (its tokens verify until they expire; it never signs). Keys
 * live in the store, shared by every instance. Before signing and serving the JWKS, an instance
 * compares the store's key list (one small query) with what it holds and reloads on a change, so
 * a rotation anywhere (another instance, the shell) signs from the next token on; a token naming
 * an unknown kid does the same at most once a second. Whether a kid still verifies is checked in
 * the store on every request (store/request-facts.ts), so a retired key stops at once.
 */
import { createPrivateKey, createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import type { Clock } from '../clock';
import type { Tx } from '../store/connection';
import { insertFirstSigningKey, keyListVersion, legacySecret, listSigningKeys, recordTokenTtl, rotateSigningKey } from '../store/keys';
import { newSigningKey, type PublicJwk, type SigningAlg } from '../auth/keys';

interface Verifier {
  alg: SigningAlg;
  key: KeyObject;
}

const UNKNOWN_KID_RELOAD_MS = 1_000;
/** How long an instance may sign with a key after another one rotated (it checks before signing). */
const ROTATION_GRACE_MS = 60_000;

export class KeyRing {
  private signer!: { kid: string; alg: SigningAlg; key: KeyObject };
  private verifiers = new Map<string, Verifier>();
  private published: PublicJwk[] = [];
  private verifyUntil = new Map<string, number>();
  private privateKeys: ReadonlyArray<Record<string, unknown>> = [];
  private legacy: { key: KeyObject; issuedBefore: number } | null = null;
  private version = '';
  private checkedAt = 0;
  private reloading: Promise<void> | null = null;

  constructor(
    private readonly root: Tx,
    private readonly clock: Clock,
    /** This instance's token lifetime, recorded with each key it signs with (rotation reads it). */
    private readonly tokenTtlSeconds: number,
  ) {}

  /** Loads the keys, making the first one if the store has none. */
  async open(): Promise<void> {
    if (!(await listSigningKeys(this.root)).some((k) => k.retired_at === null)) await insertFirstSigningKey(this.root, await newSigningKey('RS256'));
    await this.load();
  }

  private async load(): Promise<void> {
    const [rows, legacy, version] = await Promise.all([listSigningKeys(this.root), legacySecret(this.root), keyListVersion(this.root)]);
    const now = this.clock.now();
    const live = rows.filter((r) => r.verify_until === null || r.verify_until > now);
    const active = live.find((r) => r.retired_at === null);
    if (!active) throw new Error('the store has no signing key: run any gatehouse command to make one');
    const verifiers = new Map<string, Verifier>();
    for (const r of live) verifiers.set(r.kid, { alg: r.alg as SigningAlg, key: createPublicKey(createPrivateKey(r.private_key)) });
    if (active.max_token_ttl === null || active.max_token_ttl < this.tokenTtlSeconds) await recordTokenTtl(this.root, active.kid, this.tokenTtlSeconds);
    this.signer = { kid: active.kid, alg: active.alg as SigningAlg, key: createPrivateKey(active.private_key) };
    this.verifiers = verifiers;
    this.published = live.map((r) => JSON.parse(r.public_jwk) as PublicJwk);
    this.verifyUntil = new Map(live.filter((r) => r.verify_until !== null).map((r) => [r.kid, r.verify_until!]));
    // The signing key first: the OIDC provider signs ID tokens with the first key of their algorithm.
    this.privateKeys = [active, ...live.filter((r) => r !== active)].map((r) => ({
      ...createPrivateKey(r.private_key).export({ format: 'jwk' }),
      kid: r.kid,
      alg: r.alg,
      use: 'sig',
    }));
    this.legacy = legacy && { key: createSecretKey(legacy.secret), issuedBefore: legacy.issuedBefore };
    this.version = version;
  }

  /** Reloads when the store's key list changed; `minAgeMs`: not if checked more recently than that. */
  async refresh(minAgeMs = 0): Promise<void> {
    const now = this.clock.now();
    if (now - this.checkedAt < minAgeMs) return;
    this.checkedAt = now;
    if ((await keyListVersion(this.root)) === this.version) return;
    this.reloading ??= this.load().finally(() => (this.reloading = null));
    await this.reloading;
  }

  /** The key that signs, as the store has it now. */
  async signing(): Promise<{ kid: string; alg: SigningAlg; key: KeyObject }> {
    await this.refresh();
    return this.signer;
  }

  /**
   * The algorithm of the signing key as last loaded, without asking the store: what the OIDC
   * provider signs with (its keys come from privateJwks, checked at most once a second).
   */
  signingAlg(): SigningAlg {
    return this.signer.alg;
  }

  /** The verifier for `kid`; an unknown kid reloads the ring (at most once a second) first. */
  async verifier(kid: string): Promise<Verifier | undefined> {
    const known = this.verifiers.get(kid);
    if (known) return known;
    await this.refresh(UNKNOWN_KID_RELOAD_MS);
    return this.verifiers.get(kid);
  }

  legacyKey(): { key: KeyObject; issuedBefore: number } | null {
    return this.legacy;
  }

  /**
   * The private keys that verify, as JWKs, the signing one first (the OIDC provider signs with
   * them). Checked against the store at most once a second: it is asked on every /oidc request.
   * `fresh`: checked now (discovery and authorization, where a flow begins: a client registered
   * just after a rotation names the new key's algorithm, which the provider must already have).
   */
  async privateJwks(fresh = false): Promise<{ version: string; keys: ReadonlyArray<Record<string, unknown>> }> {
    await this.refresh(fresh ? 0 : UNKNOWN_KID_RELOAD_MS);
    return { version: this.version, keys: this.privateKeys };
  }

  /** The public keys that verify now: the JWKS. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    await this.refresh();
    const now = this.clock.now();
    return { keys: this.published.filter((k) => (this.verifyUntil.get(k.kid) ?? Infinity) > now) };
  }
}

/** Starts signing with a new key; the old ones verify until every token they signed expired. */
export async function rotateKeys(root: Tx, clock: Clock, alg: SigningAlg, tokenTtlSeconds: number): Promise<{ kid: string; retired: string[] }> {
  const key = await newSigningKey(alg);
  // A token another instance signed with the old key in the same instant still lives its full
  // TTL: the longest any instance recorded for that key (its --token-ttl), or this process's.
  const verifyUntil = (recorded: number | null) => clock.now() + Math.max(recorded ?? 0, tokenTtlSeconds) * 1000 + ROTATION_GRACE_MS;
  return { kid: key.kid, retired: await rotateSigningKey(root, key, verifyUntil) };
}
