/**
 * SCIM tokens: what a provisioning service (Entra ID, Okta, a script) presents at /scim/v2.
 * `ghscim_` and 32 base64url characters (192 random bits), shown once, kept as SHA-256. A token
 * opens /scim/v2 and nothing else; no person's API key or access token opens /scim/v2.
 */
import { createHash, randomBytes } from 'node:crypto';
import { iso } from '../clock';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { newShellSafeId } from '../auth/ids';
import { scimName } from './names';
import { insertScimToken, listScimTokens, revokeScimToken, type ScimTokenRow, useScimToken } from '../store/scim';

const PREFIX = 'ghscim_';
const SHAPE = /^ghscim_[A-Za-z0-9_-]{32}$/;
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export interface ScimTokenView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const view = (r: ScimTokenRow): ScimTokenView => ({
  id: r.id,
  name: r.name,
  created_at: iso(r.created_at),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at),
});

/** A new token: the prefix and 24 random bytes as base64url (the prefix keeps a dash from its start). */
export const newScimToken = (): string => PREFIX + randomBytes(24).toString('base64url');

export async function addToken(s: Services, actor: Actor, name: string): Promise<ScimTokenView & { token: string }> {
  const trimmed = scimName(name);
  const token = newScimToken();
  const id = newShellSafeId(9);
  if (!(await insertScimToken(s.store.root, { id, name: trimmed, token_hash: digest(token) }))) {
    throw new AppError('conflict', `a SCIM token named ${trimmed} exists already (revoked ones keep their names)`);
  }
  await s.audit.record('scim_token_added', actor, { account: null, scim_token: id, name: trimmed });
  const row = (await listScimTokens(s.store.root)).find((r) => r.id === id)!;
  return { ...view(row), token };
}

export const listTokens = async (s: Services): Promise<ScimTokenView[]> => (await listScimTokens(s.store.root)).map(view);

export async function revokeToken(s: Services, actor: Actor, nameOrId: string): Promise<ScimTokenView> {
  const row = await revokeScimToken(s.store.root, nameOrId);
  if (!row) throw new AppError('not_found', `no live SCIM token ${nameOrId.slice(0, 64)}`);
  await s.audit.record('scim_token_revoked', actor, { account: null, scim_token: row.id, name: row.name });
  return view({ ...row, revoked_at: s.clock.now() });
}

/** The token a request presents, checked: its name (for the audit), or 401. */
export async function checkToken(s: Services, bearer: string | null): Promise<{ id: string; name: string }> {
  if (bearer === null) throw new AppError('unauthenticated', 'send a SCIM token (Authorization: Bearer ghscim_…); make one with scim token add');
  if (!SHAPE.test(bearer)) throw new AppError('invalid_token', 'this is not a SCIM token: only a token made with scim token add opens /scim/v2');
  const row = await useScimToken(s.store.root, digest(bearer));
  if (!row) throw new AppError('invalid_token', 'this SCIM token is unknown or revoked');
  return { id: row.id, name: row.name };
}
