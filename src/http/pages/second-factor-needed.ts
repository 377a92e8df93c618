/**
 * "A second factor is needed": an app (an OpenID Connect client, a SAML service provider) needs two
 * factors and the account has none, as the core answered (accounts/app-answer.ts). One page for
 * every protocol: it says so, where to add one, and its button takes the app its refusal (not at
 * once: the person reads this first). The button's form is the protocol's: OpenID Connect's goes
 * back to the interaction (same site, with the CSRF token), SAML's posts the signed AuthnFailed to
 * the service provider.
 */
import type { Context } from 'koa';
import { html, notice, page } from './html';
import { send } from './kit';

export interface SecondFactorNeeded {
  /** The app's name, as registered. */
  app: string;
  /** Where the button goes, and what it carries: the app's refusal. */
  back: { url: string; fields: Record<string, string> };
  viewer: { administrator: boolean };
  csrf: string;
}

export function secondFactorNeeded(ctx: Context, o: SecondFactorNeeded): void {
  ctx.set('Cache-Control', 'no-store');
  send(
    ctx,
    403,
    page(
      { title: 'A second factor is needed', signedIn: true, administrator: o.viewer.administrator, csrf: o.csrf },
      html`${notice('error', `${o.app} asks for a second factor when you sign in, and your account has none yet.`)}
        <section>
          <p>On your account page, add an authenticator app (a code that changes every 30 seconds) or a passkey. Then go back to ${o.app} and sign in again.</p>
          <p class="links"><a href="/account">Add a second factor</a></p>
          <form method="post" action="${o.back.url}" data-answer>
            ${Object.entries(o.back.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
            <button type="submit" class="secondary">Back to ${o.app} (not signed in)</button>
          </form>
        </section>`,
    ),
  );
}
