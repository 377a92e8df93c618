/**
 * The SAML signing key and its self-signed certificate (RSA 2048, SHA-256), made at first use
 * and kept in the store. `saml cert rotate` adds the next one, which metadata lists beside the
 * current one so SPs can learn it; `saml cert retire` drops the current one and the next one
 * signs from then on. SAML SPs pin certificates, not key ids: the overlap is for them.
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { insertFirstSamlKey, insertNextSamlKey, listSamlKeys, retireSamlKey, type SamlKeyRow } from '../store/saml';

/** How long a certificate is valid: SPs that check dates (most do not) see ten years. */
const VALIDITY_DAYS = 3650;

export interface SamlKey {
  kid: string;
  privateKey: string;
  /** PEM. */
  certificate: string;
  /** The certificate's DER in base64, as metadata and KeyInfo carry it. */
  certificateBase64: string;
  status: 'current' | 'next';
}

export interface SamlCertView {
  kid: string;
  status: 'current' | 'next';
  subject: string;
  not_after: string;
  /** SHA-256 of the DER, colon-separated hex: what an SP's settings sometimes ask for. */
  fingerprint_sha256: string;
  created_at: string;
}

const der64 = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

const toKey = (row: SamlKeyRow): SamlKey => ({
  kid: row.kid,
  privateKey: row.private_key,
  certificate: row.certificate,
  certificateBase64: der64(row.certificate),
  status: row.status,
});

/** A new RSA key with a self-signed certificate for it (node-forge writes the certificate). */
async function newKey(s: Services): Promise<Omit<SamlKeyRow, 'status' | 'created_at'>> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const forge = (await import('node-forge')).default;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // A positive serial (the first byte's high bit clear), 16 random bytes.
  cert.serialNumber = `0${randomBytes(16).toString('hex').slice(1)}`;
  const now = new Date(s.clock.now());
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + VALIDITY_DAYS * 86_400_000);
  const host = new URL(s.config.publicUrl).hostname || 'gatehouse';
  const name = [
    { name: 'commonName', value: host.slice(0, 64) },
    { name: 'organizationName', value: 'Gatehouse SAML signing' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, critical: true },
  ]);
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  cert.sign(forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()), forge.md.sha256.create());
  return { kid: randomBytes(9).toString('base64url'), private_key: pem, certificate: forge.pki.certificateToPem(cert) };
}

/** The current key and the next one (if any), making the first at first use. */
export async function samlKeys(s: Services): Promise<SamlKey[]> {
  let rows = await listSamlKeys(s.store.root);
  if (!rows.some((r) => r.status === 'current')) {
    await insertFirstSamlKey(s.store.root, await newKey(s));
    rows = await listSamlKeys(s.store.root);
  }
  return rows.map(toKey);
}

export function certView(key: SamlKey, createdAt?: number): SamlCertView {
  const x = new X509Certificate(key.certificate);
  return {
    kid: key.kid,
    status: key.status,
    subject: x.subject.replace(/\n/g, ', '),
    not_after: new Date(x.validTo).toISOString(),
    fingerprint_sha256: x.fingerprint256,
    created_at: new Date(createdAt ?? 0).toISOString(),
  };
}

export async function listCerts(s: Services): Promise<SamlCertView[]> {
  await samlKeys(s);
  return (await listSamlKeys(s.store.root)).map((r) => certView(toKey(r), r.created_at));
}

export async function rotateCert(s: Services, actor: Actor): Promise<SamlCertView[]> {
  await samlKeys(s);
  const key = await newKey(s);
  if (!(await insertNextSamlKey(s.store.root, key))) {
    throw new AppError('conflict', 'a next certificate is waiting already: `saml cert retire` makes it the one that signs');
  }
  await s.audit.record('saml_cert_rotated', actor, { account: null, kid: key.kid });
  return listCerts(s);
}

export async function retireCert(s: Services, actor: Actor): Promise<SamlCertView[]> {
  const done = await retireSamlKey(s.store.root);
  if (!done) throw new AppError('conflict', 'there is no next certificate to sign with: `saml cert rotate` adds one (and metadata lists it) first');
  await s.audit.record('saml_cert_retired', actor, { account: null, kid: done.retired });
  return listCerts(s);
}
