/**
 * A Keycloak realm export (`kc.sh export --realm R`, or the console's partial export with users):
 * users with their password credentials, groups with their subGroups (kept as nesting), and each
 * user's groups as paths ("/staff/engineering"). A password credential's `credentialData` names
 * the algorithm and iterations and its `secretData` the salt and derived key (both base64); the
 * import stores them as a PHC-style string, `$pbkdf2-sha256$i=27500$<salt>$<key>`. PBKDF2 with
 * SHA-256, SHA-512 and SHA-1 (Keycloak's plain "pbkdf2") is kept; other algorithms (argon2 of
 * Keycloak 24 and later) are reported and the person is skipped.
 */
import { pbkdf2String } from '../auth/imported-hashes';
import { badFile, flag, isRecord, type Source, type SourceGroup, type SourcePerson } from './source';

const ALGORITHMS: Record<string, 'sha1' | 'sha256' | 'sha512'> = { 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512', pbkdf2: 'sha1' };
const B64 = /^[A-Za-z0-9+/]+={0,2}$/;

const json = (v: unknown): Record<string, unknown> | null => {
  if (isRecord(v)) return v;
  if (typeof v !== 'string') return null;
  try {
    const parsed: unknown = JSON.parse(v);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
};

/** The password credential as a hash string, '' without one, or why it cannot be kept. */
function passwordOf(credentials: unknown): { hash: string } | { problem: string } {
  const password = Array.isArray(credentials) ? credentials.find((c) => isRecord(c) && c.type === 'password') : undefined;
  if (!isRecord(password)) return { hash: '' };
  const data = json(password.credentialData);
  const secret = json(password.secretData);
  if (!data || !secret) return { problem: 'its password credential is unreadable' };
  const algorithm = typeof data.algorithm === 'string' ? data.algorithm : '';
  // The table's own names only: an algorithm named `constructor` or `toString` is one Gatehouse cannot check.
  const digest = Object.hasOwn(ALGORITHMS, algorithm) ? ALGORITHMS[algorithm] : undefined;
  if (!digest) return { problem: `its password uses ${algorithm.slice(0, 30) || 'an unnamed algorithm'}, which Gatehouse cannot check` };
  const iterations = data.hashIterations;
  if (typeof iterations !== 'number' || !Number.isInteger(iterations) || iterations < 1) return { problem: 'its password credential has no iteration count' };
  const { value, salt } = secret;
  if (typeof value !== 'string' || typeof salt !== 'string' || !B64.test(value) || !B64.test(salt)) {
    return { problem: 'its password credential has no base64 value and salt' };
  }
  return { hash: pbkdf2String(digest, iterations, Buffer.from(salt, 'base64'), Buffer.from(value, 'base64')) };
}

/** Groups and their subgroups, parents first; a leaf name two groups share is named by its path. */
function groupsOf(tree: unknown): SourceGroup[] {
  const out: Array<{ path: string; leaf: string; parent: string | null }> = [];
  const walk = (list: unknown, parent: string | null, depth: number) => {
    if (!Array.isArray(list) || depth > 20) return;
    for (const g of list) {
      if (!isRecord(g) || typeof g.name !== 'string' || g.name.trim() === '') continue;
      const path = typeof g.path === 'string' ? g.path : `${parent ?? ''}/${g.name}`;
      out.push({ path, leaf: g.name.trim(), parent });
      walk(g.subGroups, path, depth + 1);
    }
  };
  walk(tree, null, 0);
  const leaves = new Map<string, number>();
  for (const g of out) leaves.set(g.leaf.toLowerCase(), (leaves.get(g.leaf.toLowerCase()) ?? 0) + 1);
  return out.map((g) => ({ key: g.path, name: leaves.get(g.leaf.toLowerCase())! > 1 ? g.path.replace(/^\//, '') : g.leaf, parent: g.parent }));
}

export function readKeycloak(text: string): Source {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw badFile('keycloak', 'it is not JSON');
  }
  if (!isRecord(doc) || !Array.isArray(doc.users)) throw badFile('keycloak', 'it has no users array');
  const groups = groupsOf(doc.groups);
  const known = new Set(groups.map((g) => g.key));
  const people: SourcePerson[] = doc.users.map((u: unknown, i: number) => {
    if (!isRecord(u)) return { at: `user ${i + 1}`, email: undefined, groups: [], disabled: false, emailVerified: false, problem: 'not a user object' };
    const username = typeof u.username === 'string' ? u.username : undefined;
    const first = typeof u.firstName === 'string' ? u.firstName.trim() : '';
    const last = typeof u.lastName === 'string' ? u.lastName.trim() : '';
    const paths = Array.isArray(u.groups) ? u.groups.filter((g): g is string => typeof g === 'string') : [];
    // A path the export's groups do not list is a group of its own, at the top.
    for (const p of paths) {
      if (!known.has(p)) {
        known.add(p);
        groups.push({ key: p, name: p.replace(/^\//, ''), parent: null });
      }
    }
    const password = passwordOf(u.credentials);
    return {
      at: `user ${username ?? i + 1}`,
      email: u.email,
      name: `${first} ${last}`.trim() || undefined,
      username,
      groups: [...new Set(paths)],
      passwordHash: 'hash' in password ? password.hash : '',
      disabled: !flag(u.enabled, true),
      emailVerified: flag(u.emailVerified, false),
      ...('problem' in password ? { problem: password.problem } : {}),
    };
  });
  return { people, groups };
}
