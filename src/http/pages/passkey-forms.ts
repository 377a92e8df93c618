/** The passkey forms of the pages: the ceremony form the page script fills in, and the account page's section. */
import type { PasskeyView } from '../../core';
import { html, Html } from './html';

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
export function passkeySection(csrf: string, o: { passkeys: PasskeyView[]; hasPassword: boolean; recent: boolean; back: string }): Html {
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
  // Adding one needs a sign-in in the last five minutes, or the password now (the core decides; this only shows the field).
  const reauth = o.recent
    ? []
    : o.hasPassword
      ? [
          html`<div class="field">
            <label for="f-passkey-password">Password</label>
            <input
              id="f-passkey-password"
              type="password"
              autocomplete="current-password"
              data-passkey-option="password"
              required
              aria-describedby="f-passkey-password-hint"
            />
            <small id="f-passkey-password-hint">Confirms it is you before a new way in is added.</small>
          </div>`,
        ]
      : [];
  // Or a passkey now: a passkey sign-in opens a fresh session for this browser, and comes back here.
  const confirm =
    !o.recent && o.passkeys.length > 0
      ? ceremonyForm('signin', '/signin/passkey', csrf, 'Confirm it is you with a passkey', [
          html`<input type="hidden" name="rd" value="${o.back}" />`,
          html`<p class="meta">
            ${o.hasPassword ? 'Or confirm with a passkey instead of the password:' : 'To add another passkey, first confirm it is you with one you have:'}
          </p>`,
        ])
      : '';
  const add =
    !o.recent && !o.hasPassword
      ? confirm
      : ceremonyForm('register', '/account/passkeys/add', csrf, 'Add a passkey', [
          html`<div class="field">
            <label for="f-passkey-name">Name of the new passkey</label>
            <input id="f-passkey-name" name="name" maxlength="100" autocomplete="off" placeholder="Phone, laptop, security key" />
          </div>`,
          ...reauth,
        ]);
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
    ${add}${o.hasPassword ? confirm : ''}
  </section>`;
}
