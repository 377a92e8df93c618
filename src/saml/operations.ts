/**
 * The SAML 2.0 identity provider's operations: service providers and the signing certificate,
 * managed by administrators (the shell, the console); and what the HTTP front end (/saml/*)
 * runs for a browser: a request in, the person's sign-in on the pages, a signed Response out.
 */
import type { Caller } from '../actor';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { actorOf, requireAdministrator } from '../access/caller';
import { revokeSession } from '../accounts/sessions';
import { findSession } from '../store/sessions';
import { listCerts, retireCert, rotateCert, type SamlCertView } from './keys';
import { addSp, listSpViews, type NewSamlSp, removeSp, type SamlSpView, setSpTwoFactor, showSp } from './providers';
import type { BoundMessage } from './messages';
import { idpMetadata } from './metadata';
import { continueSignin, type ContinueResult, startSignin, startUnsolicited } from './sso';
import { logout, type LogoutResult } from './logout';

export interface SamlOperations {
  /** The IdP's metadata XML (/saml/metadata). */
  metadata(): Promise<string>;
  addSp(actor: Actor, input: NewSamlSp): Promise<SamlSpView>;
  listSps(actor: Actor): Promise<SamlSpView[]>;
  showSp(actor: Actor, idOrEntityId: string): Promise<SamlSpView>;
  removeSp(actor: Actor, idOrEntityId: string): Promise<SamlSpView>;
  /** Whether sign-ins to it need two factors. */
  setSpTwoFactor(actor: Actor, idOrEntityId: string, twoFactor: boolean): Promise<SamlSpView>;
  listCerts(actor: Actor): Promise<SamlCertView[]>;
  rotateCert(actor: Actor): Promise<SamlCertView[]>;
  retireCert(actor: Actor): Promise<SamlCertView[]>;
  /** An AuthnRequest (either binding): checked and kept; the browser continues with the handle. */
  start(caller: Caller, message: BoundMessage): Promise<{ handle: string; spName: string }>;
  /** A sign-in to a registered SP started from Gatehouse's own page (no request); counted per address like a request. */
  startUnsolicited(caller: Caller, spId: string): Promise<{ handle: string }>;
  /** The browser with its page session: sign in first, or the Response to post. */
  continue(caller: Caller, handle: string): Promise<ContinueResult>;
  /** A LogoutRequest: the caller's page session ends if the request names its sign-in there; the LogoutResponse to deliver. */
  logout(caller: Caller, message: BoundMessage): Promise<LogoutResult>;
}

export function samlOperations(s: Services): SamlOperations {
  return {
    metadata: () => idpMetadata(s),
    async addSp(actor, input) {
      requireAdministrator(actor, 'register SAML service providers');
      return addSp(s, actor, input);
    },
    async listSps(actor) {
      requireAdministrator(actor, 'list SAML service providers');
      return listSpViews(s);
    },
    async showSp(actor, id) {
      requireAdministrator(actor, 'read SAML service providers');
      return showSp(s, id);
    },
    async setSpTwoFactor(actor, id, twoFactor) {
      requireAdministrator(actor, 'change SAML service providers');
      return setSpTwoFactor(s, actor, id, twoFactor);
    },
    async removeSp(actor, id) {
      requireAdministrator(actor, 'remove SAML service providers');
      return removeSp(s, actor, id);
    },
    async listCerts(actor) {
      requireAdministrator(actor, 'read the SAML certificates');
      return listCerts(s);
    },
    async rotateCert(actor) {
      requireAdministrator(actor, 'rotate the SAML certificate');
      return rotateCert(s, actor);
    },
    async retireCert(actor) {
      requireAdministrator(actor, 'retire the SAML certificate');
      return retireCert(s, actor);
    },
    start: (caller, message) => startSignin(s, message, caller),
    startUnsolicited: (caller, spId) => startUnsolicited(s, spId, caller),
    continue: async (caller, handle) => continueSignin(s, await actorOf(s, caller), handle),
    async logout(caller, message) {
      const actor = await actorOf(s, caller);
      return logout(s, actor, message, async () => {
        if (actor.session === null) return;
        const session = await findSession(s.store.root, actor.session);
        if (session && session.ended_at === null) await revokeSession(s, actor, session.account_id, session.id, 'signout');
      });
    },
  };
}
