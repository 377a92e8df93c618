/**
 * What the OpenID Connect provider needs from the core: storage for its models (one table,
 * shared by every instance), clients from the store, an account's claims, and whether an account
 * may sign in to a client (--allowed-group). Payloads that name an account die with its
 * auth_version or when it is disabled (store/oidc.ts findPayload).
 */
import type { Services } from '../services';
import { accountClaims, consumePayload, destroyPayload, findClient, findPayload, revokeGrant, upsertPayload } from '../store/oidc';
import { passesGate } from '../groups/manage';
import { findSession, type SessionRow } from '../store/sessions';
import type { Actor } from '../actor';
import { clientMetadata } from './clients';

export interface ProviderAdapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void>;
  find(id: string): Promise<Record<string, unknown> | undefined>;
  findByUserCode(code: string): Promise<Record<string, unknown> | undefined>;
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export function adapterFor(s: Services, model: string): ProviderAdapter {
  const live = (row: { payload: string; consumed_at: number | null } | undefined) =>
    row ? { ...(JSON.parse(row.payload) as Record<string, unknown>), ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at / 1000) } : {}) } : undefined;
  return {
    async upsert(id, payload, expiresIn) {
      if (model === 'Client') return; // clients come from the shell only
      const row = {
        model,
        id,
        payload: JSON.stringify(payload),
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        client_id: model === 'Grant' && typeof payload.clientId === 'string' ? payload.clientId : null,
        account: typeof payload.accountId === 'string' ? payload.accountId : null,
        expires_at: expiresIn ? s.clock.now() + expiresIn * 1000 : null,
        user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
      };
      await upsertPayload(s.store.root, row);
    },
    async find(id) {
      if (model === 'Client') return clientMetadata(s, id);
      return live(await findPayload(s.store.root, model, { id }, { expired: model === 'DeviceCode' }));
    },
    // An expired device code is still found (until pruned): the device is told expired_token, and
    // the person "that code has expired", not "unknown code".
    async findByUserCode(userCode) {
      return live(await findPayload(s.store.root, model, { userCode }, { expired: true }));
    },
    async findByUid(uid) {
      return live(await findPayload(s.store.root, model, { uid }));
    },
    consume: (id) => consumePayload(s.store.root, model, id),
    // A device code cancelled by the person has no grant: polled again, the provider revokes "its"
    // grant, undefined; there is nothing to remove (it answered 500 before).
    destroy: async (id) => (id ? destroyPayload(s.store.root, model, id) : undefined),
    revokeByGrantId: async (grantId) => (grantId ? revokeGrant(s.store.root, model, grantId) : undefined),
  };
}

export interface OidcClaims {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  preferred_username: string;
  groups: string[];
}

/** An enabled account's claims (groups: names, its dedicated group excluded), or undefined. */
export async function claimsOf(s: Services, sub: string): Promise<OidcClaims | undefined> {
  const account = await accountClaims(s.store.root, sub);
  if (!account || account.disabled) return undefined;
  return {
    sub,
    email: account.email,
    email_verified: account.email_verified,
    name: account.name,
    preferred_username: account.username,
    groups: account.groups,
  };
}

/**
 * Whether the client skips consent, and whether `sub` may sign in to it: with allowed groups,
 * only members of those groups, named by id and counted only while managed (a group any account
 * could make or rename never opens a gate).
 */
export async function clientPolicy(s: Services, clientId: string, sub: string | null): Promise<{ firstParty: boolean; allowed: boolean; name: string }> {
  const client = await findClient(s.store.root, clientId);
  if (!client) return { firstParty: false, allowed: false, name: '' };
  const allowedGroups = JSON.parse(client.allowed_groups) as string[];
  const allowed = await passesGate(s.store.root, sub, allowedGroups);
  return { firstParty: client.first_party, allowed, name: client.name };
}

/**
 * The account and sign-in time of a page session (the caller carries its live access token): the
 * provider's sessions follow the pages' session, so a sign-out or another person's sign-in on the
 * pages ends what the provider would otherwise still answer for.
 */
export async function pageSessionOf(s: Services, actor: Actor): Promise<PageSession | null> {
  if (actor.session === null || actor.principal.referenceId === null) return null;
  const session = await findSession(s.store.root, actor.session);
  if (!session || session.ended_at !== null) return null;
  return { sub: actor.principal.referenceId, authTime: Math.floor(session.created_at / 1000), signedInAt: session.created_at, amr: amrOf(session) };
}

/** The page session an OpenID Connect sign-in stands on: who, since when, and how (amr, RFC 8176). */
export interface PageSession {
  sub: string;
  /** Seconds, as auth_time says it. */
  authTime: number;
  /** The same instant in milliseconds: "signed in after this interaction asked" needs more than seconds. */
  signedInAt: number;
  amr: string[];
}

/**
 * A passkey is hardware-bound and verified its user; a password is one factor, or two with TOTP;
 * an upstream provider's sign-in is federated ("fed", as Microsoft's tokens say it), with "otp" when
 * this account's TOTP was asked too.
 */
export const amrOf = (session: Pick<SessionRow, 'method' | 'two_factor'>): string[] => {
  if (session.method === 'passkey') return ['hwk', 'user'];
  const first = session.method === 'provider' ? 'fed' : 'pwd';
  return session.two_factor ? [first, 'otp'] : [first];
};
