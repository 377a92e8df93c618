/** The passkey forms of the pages: the ceremony form the page script fills in, and the account page's section. */
import type { PasskeyView } from '../../core';
import { html, Html } from './html';
import { confirmAddress } from './confirm-return';
import { lastUsed } from './credential-forms';
import { look, t } from './look';

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
    <p
      class="notice error"
      role="alert"
      data-passkey-error
      data-cancelled="${t('passkey.script.cancelled')}"
      data-registered="${t('passkey.script.registered')}"
      data-wrong-host="${t('passkey.script.wrong_host')}"
      data-failed="${t('passkey.script.failed')}"
      data-refused="${t('passkey.script.refused')}"
      hidden
    ></p>
    <button type="submit" class="secondary">${submit}</button>
  </form>`;
}

/** The account page's passkey section. */
export function passkeySection(csrf: string, o: { passkeys: PasskeyView[]; hasPassword: boolean; recent: boolean }): Html {
  const list = o.passkeys.length
    ? html`<ul class="sessions" id="passkey-list">
        ${o.passkeys.map(
          (p) =>
            html`<li>
              <div>
                <div translate="no">${p.name}</div>
                <div class="meta">
                  ${[t('account.added', { when: look().tr.dateTime(p.created_at) }), lastUsed(p.last_used_at), ...(p.backed_up ? [t('account.passkeys.synced')] : [])].join(' · ')}
                </div>
              </div>
              <form method="post" action="/account/passkeys/remove">
                <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="id" value="${p.id}" />
                <button type="submit" class="secondary" aria-label="${t('account.passkeys.remove', { name: p.name })}">${t('account.remove')}</button>
              </form>
            </li>`,
        )}
      </ul>`
    : html`<p>${t('account.passkeys.none')}</p>`;
  // A new passkey is a new way in: after a recent sign-in only (the core decides; this shows the way there).
  const add = o.recent
    ? ceremonyForm('register', '/account/passkeys/add', csrf, t('account.passkeys.add'), [
        html`<div class="field">
          <label for="f-passkey-name">${t('account.passkeys.name')}</label>
          <input id="f-passkey-name" name="name" maxlength="100" autocomplete="off" placeholder="${t('account.passkeys.name_example')}" />
        </div>`,
      ])
    : html`<p class="links"><a href="${confirmAddress('/account#passkeys')}">${t('account.passkeys.confirm')}</a></p>`;
  const noPassword = o.hasPassword
    ? ''
    : html`<p>${t('account.passkeys.no_password')}</p>
        <form method="post" action="/account/password-link" class="links">
          <input type="hidden" name="csrf" value="${csrf}" /><button type="submit" class="secondary">${t('account.passkeys.mail_link')}</button>
        </form>`;
  return html`<section id="passkeys" aria-labelledby="h-passkeys">
    <h2 id="h-passkeys">${t('account.passkeys')}</h2>
    ${list}${noPassword}
    <noscript><p class="meta">${t('account.passkeys.needs_js')}</p></noscript>
    ${add}
  </section>`;
}
