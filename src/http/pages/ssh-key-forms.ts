/**
 * The account page's Linux section (contract section 25): the SSH public keys the directory
 * serves to the servers that read it (added after a recent sign-in, removed one by one) and the
 * login shell they give.
 */
import type { SshKeyView } from '../../core';
import { csrfField, field, form, html, type Html, tm } from './html';
import { confirmAddress } from './confirm-return';
import { look, t } from './look';

export function sshKeySection(csrf: string, list: readonly SshKeyView[], shell: string, recent: boolean): Html {
  const add = recent
    ? html`<form method="post" action="/account/ssh-keys">
        ${csrfField(csrf)}
        <div class="field">
          <label for="f-sshKey">${t('account.ssh_keys.public_key')}</label>
          <textarea
            id="f-sshKey"
            name="sshKey"
            rows="4"
            maxlength="8192"
            required
            spellcheck="false"
            autocomplete="off"
            aria-describedby="f-sshKey-hint"
          ></textarea>
          <small id="f-sshKey-hint">${tm('account.ssh_keys.hint', { example: html`<code>ssh-ed25519 AAAA&hellip; you@laptop</code>` })}</small>
        </div>
        <button type="submit" class="secondary">${t('account.ssh_keys.add')}</button>
      </form>`
    : html`<p class="links"><a href="${confirmAddress('/account#ssh-keys')}">${t('account.ssh_keys.confirm')}</a></p>`;
  return html`<section id="ssh-keys" aria-labelledby="h-ssh-keys">
    <h2 id="h-ssh-keys">${t('account.ssh_keys')}</h2>
    <p>${t('account.ssh_keys.intro', { max: look().tr.number(20) })}</p>
    ${
      list.length
        ? html`<ul class="sessions" id="ssh-key-list">
            ${list.map(
              (k) =>
                html`<li>
                  <div>
                    <div translate="no">${k.description}${k.comment ? html` &middot; ${k.comment}` : ''}</div>
                    <div class="meta"><code>${k.fingerprint}</code> &middot; ${t('account.added', { when: look().tr.dateTime(k.created_at) })}</div>
                  </div>
                  <form method="post" action="/account/ssh-keys/remove">
                    ${csrfField(csrf)}<input type="hidden" name="id" value="${k.id}" />
                    <button type="submit" class="secondary" aria-label="${t('account.ssh_keys.remove', { fingerprint: k.fingerprint })}">
                      ${t('account.remove')}
                    </button>
                  </form>
                </li>`,
            )}
          </ul>`
        : ''
    }
    ${add}
    ${form(
      '/account/shell',
      csrf,
      t('account.ssh_keys.shell_change'),
      [
        field('shell', t('account.ssh_keys.shell'), {
          value: shell,
          autocomplete: 'off',
          maxlength: 200,
          hint: t('account.ssh_keys.shell_hint'),
        }),
      ],
      { secondary: true },
    )}
  </section>`;
}
