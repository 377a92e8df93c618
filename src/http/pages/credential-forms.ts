/**
 * The account page's named secrets: app passwords (one per app that signs in over LDAP) and API
 * keys (one per script that calls the HTTP API). Each is made here (shown once), listed with its
 * last use, and revoked one by one.
 */
import type { ApiKeyView, AppPasswordView } from '../../core';
import { AppError } from '../../errors';
import { field, form, html, type Html } from './html';
import { confirmAddress } from './confirm-return';

const date = (iso: string | null) => (iso === null ? 'never' : iso.replace('T', ' ').slice(0, 16) + ' UTC');

interface Kind<View> {
  /** The section's id stem and form paths: `app-password` → /account/app-passwords. */
  stem: string;
  title: string;
  intro: string;
  noun: string;
  /** What to do with the secret, shown above it. */
  advice: string;
  fields: Html[];
  more?: (v: View) => string;
}

function section<View extends { id: string; name: string; created_at: string; last_used_at: string | null }>(
  csrf: string,
  kind: Kind<View>,
  list: readonly View[],
  made: { name: string; secret: string } | undefined,
  recent: boolean,
): Html {
  const { stem } = kind;
  const a = /^[aeiou]/i.test(kind.noun) ? 'an' : 'a';
  // A new secret is a new way in: made after a recent sign-in only (the core refuses it otherwise).
  const make = recent
    ? form(`/account/${stem}s`, csrf, `Make ${a} ${kind.noun}`, kind.fields, { secondary: true })
    : html`<p class="links"><a href="${confirmAddress(`/account#${stem}s`)}">Confirm it is you to make ${a} ${kind.noun}</a></p>`;
  return html`<section id="${stem}s" aria-labelledby="h-${stem}s">
    <h2 id="h-${stem}s">${kind.title}</h2>
    <p>${kind.intro}</p>
    ${
      made
        ? html`<div class="notice success">
            <p>The ${kind.noun} for ${made.name}, shown only this once: ${kind.advice}</p>
            <p class="secret-once" id="${stem}">${made.secret}</p>
          </div>`
        : ''
    }
    ${
      list.length
        ? html`<ul class="sessions" id="${stem}-list">
            ${list.map(
              (v) =>
                html`<li>
                  <div>
                    <div>${v.name}</div>
                    <div class="meta">made ${date(v.created_at)}${kind.more ? ` · ${kind.more(v)}` : ''} &middot; last used ${date(v.last_used_at)}</div>
                  </div>
                  <form method="post" action="/account/${stem}s/revoke">
                    <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="id" value="${v.id}" />
                    <button type="submit" class="secondary" aria-label="Revoke the ${kind.noun} ${v.name}">Revoke</button>
                  </form>
                </li>`,
            )}
          </ul>`
        : ''
    }
    ${make}
  </section>`;
}

export function appPasswordSection(csrf: string, list: readonly AppPasswordView[], made: { name: string; secret: string } | undefined, recent: boolean): Html {
  return section(
    csrf,
    {
      stem: 'app-password',
      title: 'App passwords',
      intro:
        'For apps that sign you in over LDAP (a NAS, a media server, a mail client): one per app, so you can revoke one alone. With two-factor authentication on, these apps take only an app password.',
      noun: 'app password',
      advice: 'enter it in the app now.',
      fields: [field('appPasswordName', 'Which app is it for?', { autocomplete: 'off', maxlength: 100 })],
    },
    list,
    made,
    recent,
  );
}

/** How long a key made on the page lasts (the shell takes any duration). */
const API_KEY_LIFETIMES: Readonly<Record<string, number | null>> = { '30': 30 * 86_400, '90': 90 * 86_400, '365': 365 * 86_400, never: null };

/** The choice of API_KEY_LIFETIMES, 90 days chosen. */
export const apiKeyLifetimeField = (name: string): Html =>
  html`<div class="field">
    <label for="f-${name}">It lasts</label>
    <select id="f-${name}" name="${name}">
      <option value="30">30 days</option>
      <option value="90" selected>90 days</option>
      <option value="365">a year</option>
      <option value="never">until revoked</option>
    </select>
  </div>`;

/** The lifetime a form chose, in seconds (null: until revoked), or a clear refusal. */
export function chosenLifetime(value: string): number | null {
  if (!Object.hasOwn(API_KEY_LIFETIMES, value)) throw new AppError('invalid_input', 'choose how long the key lasts');
  return API_KEY_LIFETIMES[value];
}

export function apiKeySection(csrf: string, list: readonly ApiKeyView[], made: { name: string; secret: string } | undefined, recent: boolean): Html {
  return section(
    csrf,
    {
      stem: 'api-key',
      title: 'API keys',
      intro:
        'For scripts that call the HTTP API as you (Authorization: Bearer gh_…), with your permissions. Not for signing in on these pages. One per script, so you can revoke one alone; a new password or signing out everywhere ends them all.',
      noun: 'API key',
      advice: 'store it where the script reads it (an environment variable, a secret store).',
      fields: [field('apiKeyName', 'Which script is it for?', { autocomplete: 'off', maxlength: 100 }), apiKeyLifetimeField('apiKeyExpires')],
      more: (k) => (k.expires_at === null ? 'no expiry' : `expires ${date(k.expires_at)}`),
    },
    list,
    made,
    recent,
  );
}
