/**
 * The account page's Linux section (contract section 25): the SSH public keys the directory
 * serves to the servers that read it (added after a recent sign-in, removed one by one) and the
 * login shell they give.
 */
import type { SshKeyView } from '../../core';
import { csrfField, field, form, html, type Html } from './html';
import { confirmAddress } from './confirm-return';

const date = (iso: string) => iso.replace('T', ' ').slice(0, 16) + ' UTC';

export function sshKeySection(csrf: string, list: readonly SshKeyView[], shell: string, recent: boolean): Html {
  const add = recent
    ? html`<form method="post" action="/account/ssh-keys">
        ${csrfField(csrf)}
        <div class="field">
          <label for="f-sshKey">Public key</label>
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
          <small id="f-sshKey-hint"
            >The one line of your .pub file (ssh-ed25519 AAAA&hellip; you@laptop): ed25519, ECDSA, a security key's sk- key, or RSA of 2048 bits or more.</small
          >
        </div>
        <button type="submit" class="secondary">Add SSH key</button>
      </form>`
    : html`<p class="links"><a href="${confirmAddress('/account#ssh-keys')}">Confirm it is you to add an SSH key</a></p>`;
  return html`<section id="ssh-keys" aria-labelledby="h-ssh-keys">
    <h2 id="h-ssh-keys">SSH keys</h2>
    <p>Servers that sign people in through this directory take these keys for you (at most 20). You are told by mail when one is added or removed.</p>
    ${
      list.length
        ? html`<ul class="sessions" id="ssh-key-list">
            ${list.map(
              (k) =>
                html`<li>
                  <div>
                    <div>${k.description}${k.comment ? html` &middot; ${k.comment}` : ''}</div>
                    <div class="meta"><code>${k.fingerprint}</code> &middot; added ${date(k.created_at)}</div>
                  </div>
                  <form method="post" action="/account/ssh-keys/remove">
                    ${csrfField(csrf)}<input type="hidden" name="id" value="${k.id}" />
                    <button type="submit" class="secondary" aria-label="Remove the SSH key ${k.fingerprint}">Remove</button>
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
      'Change login shell',
      [
        field('shell', 'Login shell', {
          value: shell,
          autocomplete: 'off',
          maxlength: 200,
          hint: 'an absolute path the servers have, such as /bin/bash or /usr/bin/zsh',
        }),
      ],
      { secondary: true },
    )}
  </section>`;
}
