/**
 * The account page's app passwords: one per app that signs in over LDAP, made here (shown once),
 * listed with its last use, revoked one by one.
 */
import type { AppPasswordView } from '../../core';
import { field, form, html, type Html } from './html';

const date = (iso: string | null) => (iso === null ? 'never' : iso.replace('T', ' ').slice(0, 16) + ' UTC');

export function appPasswordSection(csrf: string, list: readonly AppPasswordView[], made?: { name: string; secret: string }): Html {
  return html`<section aria-labelledby="h-app-passwords">
    <h2 id="h-app-passwords">App passwords</h2>
    <p>
      For apps that sign you in over LDAP (a NAS, a media server, a mail client): one per app, so you can revoke one alone. With two-factor authentication on,
      these apps take only an app password.
    </p>
    ${
      made
        ? html`<div class="notice success">
            <p>The app password for ${made.name}, shown only this once: enter it in the app now.</p>
            <p class="secret-once" id="app-password">${made.secret}</p>
          </div>`
        : ''
    }
    ${
      list.length
        ? html`<ul class="sessions" id="app-password-list">
            ${list.map(
              (p) =>
                html`<li>
                  <div>
                    <div>${p.name}</div>
                    <div class="meta">made ${date(p.created_at)} &middot; last used ${date(p.last_used_at)}</div>
                  </div>
                  <form method="post" action="/account/app-passwords/revoke">
                    <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="id" value="${p.id}" />
                    <button type="submit" class="secondary" aria-label="Revoke the app password ${p.name}">Revoke</button>
                  </form>
                </li>`,
            )}
          </ul>`
        : ''
    }
    ${form('/account/app-passwords', csrf, 'Make an app password', [field('appPasswordName', 'Which app is it for?', { autocomplete: 'off', maxlength: 100 })], { secondary: true })}
  </section>`;
}
