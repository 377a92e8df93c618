/**
 * The account page's named secrets: app passwords (one per app that signs in over LDAP) and API
 * keys (one per script that calls the HTTP API). Each is made here (shown once), listed with its
 * last use, and revoked one by one.
 */
import type { ApiKeyView, AppPasswordView } from '../../core';
import { AppError } from '../../errors';
import { field, form, html, type Html, tm } from './html';
import { confirmAddress } from './confirm-return';
import { look, t } from './look';

/** When a passkey, a secret or a linked sign-in was last used, as the reader's locale writes it. */
export const lastUsed = (iso: string | null): string => t('account.last_used', { when: iso === null ? t('account.never') : look().tr.dateTime(iso) });

/** A name a person typed, in running text: data, not words. */
const typed = (name: string): Html => html`<span translate="no">${name}</span>`;

interface Kind<View> {
  /** The section's id stem and form paths: `app-password` → /account/app-passwords. */
  stem: string;
  title: string;
  intro: string | Html;
  make: string;
  /** The link to confirm it is you first, when the sign-in is not recent. */
  confirm: string;
  /** The notice above a secret just made, for its name: what to do with it. */
  made: (name: Html) => Html;
  /** The revoke button's label for screen readers. */
  revoke: (name: string) => string;
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
  // A new secret is a new way in: made after a recent sign-in only (the core refuses it otherwise).
  const make = recent
    ? form(`/account/${stem}s`, csrf, kind.make, kind.fields, { secondary: true })
    : html`<p class="links"><a href="${confirmAddress(`/account#${stem}s`)}">${kind.confirm}</a></p>`;
  return html`<section id="${stem}s" aria-labelledby="h-${stem}s">
    <h2 id="h-${stem}s">${kind.title}</h2>
    <p>${kind.intro}</p>
    ${
      made
        ? html`<div class="notice success">
            <p>${kind.made(typed(made.name))}</p>
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
                    <div translate="no">${v.name}</div>
                    <div class="meta">
                      ${[t('account.made', { when: look().tr.dateTime(v.created_at) }), ...(kind.more ? [kind.more(v)] : []), lastUsed(v.last_used_at)].join(' · ')}
                    </div>
                  </div>
                  <form method="post" action="/account/${stem}s/revoke">
                    <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="id" value="${v.id}" />
                    <button type="submit" class="secondary" aria-label="${kind.revoke(v.name)}">${t('account.revoke')}</button>
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
      title: t('account.app_passwords'),
      intro: t('account.app_passwords.intro'),
      make: t('account.app_passwords.make'),
      confirm: t('account.app_passwords.confirm'),
      made: (name) => tm('account.app_passwords.made', { name }),
      revoke: (name) => t('account.app_passwords.revoke', { name }),
      fields: [field('appPasswordName', t('account.app_passwords.which'), { autocomplete: 'off', maxlength: 100 })],
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
    <label for="f-${name}">${t('account.api_keys.lasts')}</label>
    <select id="f-${name}" name="${name}">
      <option value="30">${look().tr.duration(30 * 86_400)}</option>
      <option value="90" selected>${look().tr.duration(90 * 86_400)}</option>
      <option value="365">${t('account.api_keys.year')}</option>
      <option value="never">${t('account.api_keys.until_revoked')}</option>
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
      title: t('account.api_keys'),
      intro: tm('account.api_keys.intro', { header: html`<code>Authorization: Bearer gh_&hellip;</code>` }),
      make: t('account.api_keys.make'),
      confirm: t('account.api_keys.confirm'),
      made: (name) => tm('account.api_keys.made', { name }),
      revoke: (name) => t('account.api_keys.revoke', { name }),
      fields: [field('apiKeyName', t('account.api_keys.which'), { autocomplete: 'off', maxlength: 100 }), apiKeyLifetimeField('apiKeyExpires')],
      more: (k) => (k.expires_at === null ? t('account.api_keys.no_expiry') : t('account.api_keys.expires', { when: look().tr.dateTime(k.expires_at) })),
    },
    list,
    made,
    recent,
  );
}
