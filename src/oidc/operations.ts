/**
 * The OpenID Connect domain's operations: relying parties managed from the shell, and what the
 * provider (http/oidc.ts) is built on.
 */
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { claimsOf } from '../accounts/claims';
import { actorOf, requireAdministrator } from '../access/caller';
import { latestGrant, oidcCookieKey, recordSignin } from '../store/oidc';
import { addClient, changeClient, type ClientChanges, ClientView, listClientViews, NewClient, removeClient, rotateClientSecret, showClient } from './clients';
import {
  accountFor,
  adapterFor,
  clientPolicy,
  type ClientPolicy,
  inTokenRequest,
  OidcClaims,
  type PageSession,
  pageSessionOf,
  ProviderAdapter,
  type TokenRequestOutcome,
  type TokenUse,
} from './support';
import { answerLogin, type LoginAnswer, type LoginAsks, loginMeets, unmetAnswer } from './login';

/** Relying parties of the OpenID Connect provider, managed from the shell. */
export interface ClientOperations {
  add(actor: Actor, input: NewClient): Promise<ClientView & { client_secret?: string }>;
  list(actor: Actor): Promise<ClientView[]>;
  show(actor: Actor, clientId: string): Promise<ClientView>;
  remove(actor: Actor, clientId: string): Promise<ClientView>;
  change(actor: Actor, clientId: string, changes: ClientChanges): Promise<ClientView>;
  rotateSecret(actor: Actor, clientId: string): Promise<{ client_id: string; client_secret: string }>;
}

/** What the OpenID Connect provider (http/oidc.ts) is built on. */
export interface OidcOperations {
  adapter(model: string): ProviderAdapter;
  claims(sub: string): Promise<OidcClaims | undefined>;
  /**
   * What tokens for `clientId` may say of `sub`, checked against the client's requirements as they
   * stand now at every use of its tokens (undefined: the account is disabled or gone, the client
   * is gone or changed, the account is outside its allowed groups, or the client needs two factors
   * and the token was issued at one). `use`: the token (its grant, the level it was issued at);
   * none at an authorization, whose interaction asks for a second factor instead.
   */
  account(sub: string, clientId: string, use?: TokenUse): Promise<OidcClaims | undefined>;
  /**
   * Runs the provider's handling of one token request, serving clients from memory.
   * `stale_client`: a client it was served has since been removed or changed (the answer must be
   * invalid_client). `reused`: its code or refresh token was used by another request at the same
   * moment, and the grant is ended (the answer must be invalid_grant).
   */
  tokenRequest(fn: () => Promise<void>): Promise<TokenRequestOutcome>;
  clientPolicy(clientId: string, sub: string | null): Promise<ClientPolicy>;
  /**
   * The provider's login check: whether its session (at level `acr`) is answered for the client
   * without the interaction: the client's two-factor setting and what the request asks, against
   * the rule of answering an app (accounts/app-answer.ts).
   */
  loginMeets(clientId: string, acr: string | undefined, asks: LoginAsks): Promise<boolean>;
  /** The interaction's login for a page session: answered, not allowed, its second factor asked, or an account with none. */
  answerLogin(clientId: string, session: PageSession, asks: LoginAsks): Promise<LoginAnswer>;
  /** What the client is told when the account has no second factor (after the person read why). */
  unmetAnswer(asks: LoginAsks): { error: string; error_description: string };
  /** A Gatehouse session signed in to a client: when the session ends, the client is told (back-channel logout). */
  signedIn(sessionId: string, clientId: string): Promise<void>;
  /** The account's live grant to a client, from any earlier session. */
  latestGrant(sub: string, clientId: string): Promise<string | undefined>;
  /** The account behind a page session and when it signed in (seconds), or null. */
  pageSession(caller: Caller): Promise<PageSession | null>;
  /** The signing keys as private JWKs (never served), and a version that changes with them. */
  signingKeys(fresh?: boolean): Promise<{ version: string; keys: ReadonlyArray<Record<string, unknown>> }>;
  cookieKey(): Promise<string>;
  /** Refuses (rate_limited) an address that entered too many wrong device-flow user codes. */
  assertCodeEntryAllowed(caller: Caller): Promise<void>;
  codeEntryFailed(caller: Caller): Promise<void>;
  /** A person confirmed a device's sign-in (audited device_authorized). */
  deviceAuthorized(caller: Caller, sub: string, clientId: string): Promise<void>;
}

export function clientOperations(s: Services): ClientOperations {
  return {
    async add(actor, input) {
      requireAdministrator(actor, 'register clients');
      return addClient(s, actor, input);
    },
    async list(actor) {
      requireAdministrator(actor, 'list clients');
      return listClientViews(s);
    },
    async show(actor, clientId) {
      requireAdministrator(actor, 'read clients');
      return showClient(s, clientId);
    },
    async remove(actor, clientId) {
      requireAdministrator(actor, 'remove clients');
      return removeClient(s, actor, clientId);
    },
    async change(actor, clientId, changes) {
      requireAdministrator(actor, 'change clients');
      return changeClient(s, actor, clientId, changes);
    },
    async rotateSecret(actor, clientId) {
      requireAdministrator(actor, 'rotate client secrets');
      return rotateClientSecret(s, actor, clientId);
    },
  };
}

export function oidcOperations(s: Services): OidcOperations {
  return {
    adapter: (model) => adapterFor(s, model),
    claims: (sub) => claimsOf(s, sub),
    account: (sub, clientId, use) => accountFor(s, sub, clientId, use),
    tokenRequest: (fn) => inTokenRequest(s, fn),
    clientPolicy: (clientId, sub) => clientPolicy(s, clientId, sub),
    loginMeets: (clientId, acr, asks) => loginMeets(s, clientId, acr, asks),
    answerLogin: (clientId, session, asks) => answerLogin(s, clientId, session, asks),
    unmetAnswer,
    signedIn: (sessionId, clientId) => recordSignin(s.store.root, sessionId, clientId),
    latestGrant: (sub, clientId) => latestGrant(s.store.root, sub, clientId),
    pageSession: async (caller) => pageSessionOf(s, await actorOf(s, caller)),
    signingKeys: (fresh) => s.keys.privateJwks(fresh),
    cookieKey: () => oidcCookieKey(s.store.root),
    assertCodeEntryAllowed: (caller) => s.limiter.assertCodeEntryAllowed(caller),
    codeEntryFailed: (caller) => s.limiter.codeEntryFailed(caller),
    async deviceAuthorized(caller, sub, clientId) {
      const actor = await actorOf(s, caller);
      await s.audit.record('device_authorized', actor, { account: sub, client_id: clientId });
    },
  };
}
