/**
 * The apps a person signed in to, and taking one app's access back (the account page's
 * "connected apps"): an OpenID Connect client holding a grant, or a SAML service provider an open
 * session signed in to.
 *
 * Revoking an OIDC client ends, in one transaction, every grant of the account to it and every
 * code, access token and refresh token those grants issued, and queues a back-channel logout for
 * each open session that signed in to it (delivered by the queue, retried, never lost). A refresh
 * racing the revocation loses either way: if the revocation commits first, the refresh finds no
 * grant; if the refresh's writes commit first, the revocation deletes its new tokens with the
 * rest; and a refresh that finds its grant gone once its own writes are stored removes what it
 * wrote (oidc/support.ts). No token of the app is left alive.
 *
 * A SAML app holds no token here: revoking it forgets the sign-ins (its later LogoutRequests name
 * a session no more) and the app keeps its own session until it asks again.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { inOneTransaction } from '../store/handle';
import { forgetOidcSignins, forgetSamlSignins, grantedClients, revokeClientGrants, samlApps } from '../store/connected-apps';
import { clientSignins } from '../store/logout';
import { queueLogouts } from '../deliveries/queue';

export interface ConnectedApp {
  kind: 'oidc' | 'saml';
  /** The client id (OIDC) or the SP's id (SAML): what revoke_app takes. */
  id: string;
  name: string;
  /** What it may read: the OIDC scopes granted (openid, profile, email, groups...); SAML: the attributes it is sent. */
  scopes: string[];
  /** When it was first given access (ISO 8601), and when last (a grant renewed, a sign-in). */
  since: string | null;
  last: string | null;
  /** OIDC: whether it holds a live refresh token (it can act while you are away). */
  offline: boolean;
}

const iso = (ms: number | null) => (ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString());

/** What a SAML service provider is sent of a person (accounts/claims.ts, saml/response.ts). */
const SAML_ATTRIBUTES = ['name', 'email', 'username', 'groups'];

function grantFacts(payloads: readonly string[]): { scopes: string[]; since: number | null; last: number | null } {
  const scopes = new Set<string>();
  let since: number | null = null;
  let last: number | null = null;
  for (const text of payloads) {
    let p: { openid?: { scope?: unknown }; iat?: unknown };
    try {
      p = JSON.parse(text) as typeof p;
    } catch {
      continue;
    }
    if (typeof p.openid?.scope === 'string') for (const sc of p.openid.scope.split(' ')) if (sc) scopes.add(sc);
    if (typeof p.iat === 'number') {
      since = since === null ? p.iat * 1000 : Math.min(since, p.iat * 1000);
      last = last === null ? p.iat * 1000 : Math.max(last, p.iat * 1000);
    }
  }
  return { scopes: [...scopes].sort(), since, last };
}

/** The account's connected apps: OIDC clients holding a grant, then SAML apps its open sessions signed in to. */
export async function listApps(s: Services, account: AccountRow): Promise<ConnectedApp[]> {
  const [clients, sps] = await Promise.all([grantedClients(s.store.root, account.reference_id), samlApps(s.store.root, account.id)]);
  return [
    ...clients.map((c): ConnectedApp => {
      const f = grantFacts(c.payloads);
      return { kind: 'oidc', id: c.client_id, name: c.name, scopes: f.scopes, since: iso(f.since), last: iso(f.last), offline: c.refresh_tokens > 0 };
    }),
    ...sps.map((p): ConnectedApp => ({
      kind: 'saml',
      id: p.sp_id,
      name: p.name,
      scopes: SAML_ATTRIBUTES,
      since: iso(p.first_at),
      last: iso(p.last_at),
      offline: false,
    })),
  ];
}

/** Takes one app's access back (see above); 404 when the account has no such app. */
export async function revokeApp(s: Services, actor: Actor, account: AccountRow, kind: string, id: string): Promise<{ name: string; told: number }> {
  if (kind !== 'oidc' && kind !== 'saml') throw new AppError('invalid_input', '{--kind} must be oidc or saml');
  const app = (await listApps(s, account)).find((a) => a.kind === kind && a.id === id);
  // Its name is read before; the writes below decide, whatever was listed.
  const outcome = await inOneTransaction(s.store.root, async (tx) => {
    if (kind === 'saml') return { removed: await forgetSamlSignins(tx, account.id, id), told: 0 };
    const told = await queueLogouts(tx, await clientSignins(tx, account.id, id));
    const removed = await revokeClientGrants(tx, account.reference_id, id);
    await forgetOidcSignins(tx, account.id, id);
    return { removed, told };
  });
  if (outcome.removed === 0 && !app) throw new AppError('not_found', 'no such app holds access to this account');
  if (outcome.told > 0) s.sender.nudge();
  await s.audit.record('app_revoked', actor, { account: account.reference_id, app: id, kind });
  return { name: app?.name ?? id, told: outcome.told };
}
