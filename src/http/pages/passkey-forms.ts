/** The passkey forms of the pages: the ceremony form the page script fills in, and the account page's section. */
import type { PasskeyView } from '../../core';
import { html, Html } from './html';
import { confirmAddress } from './confirm-return';

/** A ceremony form the script fills in (hidden until the script finds WebAuthn in the browser). */
export function ceremonyForm(
  purpose: 'signin' | 'register' | 'signup',
  action: string,
  csrf: string,
  submit: string,
  fields: Html[] = [],
  o: { autofill?: boolean } = {},
): Html {
  return html`<form method="post" action="${action}" data-passkey="${purpose}" ${o.autofill ? html` data-passkey-autofill` : ''} hidden>
    <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="response" value="" />
    ${fields}
    <p class="notice error" role="alert" data-passkey-error hidden></p>
    <button type="submit" class="secondary">${submit}</button>
  </form>`;
}

const date = (iso: string | null) => (iso === null ? 'never' : iso.replace('T', ' ').slice(0, 16) + ' UTC');

/** The account page's passkey section. */
export function passkeySection(csrf: string, o: { passkeys: PasskeyView[]; hasPassword: boolean; recent: boolean }): Html {
  const list = o.passkeys.length
    ? html`<ul class="sessions" id="passkey-list">
        ${o.passkeys.map(
          (p) =>
            html`<li>
              <div>
                <div>${p.name}</div>
                <div class="meta">added ${date(p.created_at)} &middot; last used ${date(p.last_used_at)}${p.backed_up ? html` &middot; synced` : ''}</div>
              </div>
              <form method="post" action="/account/passkeys/remove">
                <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="id" value="${p.id}" />
                <button type="submit" class="secondary" aria-label="Remove the passkey ${p.name}">Remove</button>
              </form>
            </li>`,
        )}
      </ul>`
    : html`<p>None yet. A passkey signs you in with your fingerprint, face or screen lock: nothing to type, nothing to phish.</p>`;
  // A new passkey is a new way in: after a recent sign-in only (the core decides; this shows the way there).
  const add = o.recent
    ? ceremonyForm('register', '/account/passkeys/add', csrf, 'Add a passkey', [
        html`<div class="field">
          <label for="f-passkey-name">Name of the new passkey</label>
          <input id="f-passkey-name" name="name" maxlength="100" autocomplete="off" placeholder="Phone, laptop, security key" />
        </div>`,
      ])
    : html`<p class="links"><a href="${confirmAddress('/account#passkeys')}">Confirm it is you to add a passkey</a></p>`;
  const noPassword = o.hasPassword
    ? ''
    : html`<p>This account has no password: it signs in with a passkey or another provider.</p>
        <form method="post" action="/account/password-link" class="links">
          <input type="hidden" name="csrf" value="${csrf}" /><button type="submit" class="secondary">Mail me a link to set a password</button>
        </form>`;
  return html`<section id="passkeys" aria-labelledby="h-passkeys">
    <h2 id="h-passkeys">Passkeys</h2>
    ${list}${noPassword}
    <noscript><p class="meta">Passkeys need JavaScript in this browser.</p></noscript>
    ${add}
  </section>`;
}
