/**
 * "A second factor is needed": an app (an OpenID Connect client, a SAML service provider) needs two
 * factors and the account has none, as the core answered (accounts/app-answer.ts). One page for
 * every protocol: it says so, where to add one, and its button takes the app its refusal (not at
 * once: the person reads this first). The button's form is the protocol's: OpenID Connect's goes
 * back to the interaction (same site, with the CSRF token), SAML's posts the signed AuthnFailed to
 * the service provider.
 */
import type { Context } from 'koa';
import { html, page, tm } from './html';
import { named, send } from './kit';
import { t } from './look';

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
  const app = named(o.app);
  send(
    ctx,
    403,
    page(
      { title: t('pages.second_factor.title'), signedIn: true, administrator: o.viewer.administrator, csrf: o.csrf },
      html`<p class="notice error" role="alert">${tm('pages.second_factor.notice', { app })}</p>
        <section>
          <p>${tm('pages.second_factor.text', { app })}</p>
          <p class="links"><a href="/account">${t('pages.second_factor.add')}</a></p>
          <form method="post" action="${o.back.url}" data-answer>
            ${Object.entries(o.back.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
            <button type="submit" class="secondary">${tm('pages.second_factor.back', { app })}</button>
          </form>
        </section>`,
    ),
  );
}
