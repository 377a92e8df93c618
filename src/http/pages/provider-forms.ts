/** The pages' forms for upstream providers: "Continue with …" buttons, and the account page's linked sign-ins. */
import { html, type Html, tm } from './html';
import { lastUsed } from './credential-forms';
import { t } from './look';

/** A provider's name as the operator gave it: data, not words. */
const named = (p: { display_name: string }): Html => html`<span translate="no">${p.display_name}</span>`;

/** The "Continue with …" buttons, carrying where to go afterwards (and an invitation). */
export function providerButtons(
  csrf: string,
  providers: ReadonlyArray<{ name: string; display_name: string }>,
  carry: { returnTo?: string; rd?: string | null; invite?: string } = {},
): Html {
  if (providers.length === 0) return html``;
  return html`<div class="providers">
    ${providers.map(
      (p) =>
        html`<form method="post" action="/signin/provider/${p.name}">
          <input type="hidden" name="csrf" value="${csrf}" />${carry.returnTo ? html`<input type="hidden" name="return_to" value="${carry.returnTo}" />` : ''}${
            carry.rd ? html`<input type="hidden" name="rd" value="${carry.rd}" />` : ''
          }${carry.invite ? html`<input type="hidden" name="invite" value="${carry.invite}" />` : ''}
          <button type="submit" class="secondary">${tm('account.providers.continue', { provider: named(p) })}</button>
        </form>`,
    )}
  </div>`;
}

/** The account page's section: linked sign-ins, with unlink, and a link button per provider not linked yet. */
export function identitySection(
  csrf: string,
  identities: ReadonlyArray<{ id: string; provider: string; display_name: string; email: string | null; last_used_at: string | null }>,
  providers: ReadonlyArray<{ name: string; display_name: string }>,
): Html {
  if (providers.length === 0 && identities.length === 0) return html``;
  const unlinked = providers.filter((p) => !identities.some((i) => i.provider === p.name));
  return html`<section id="providers" aria-labelledby="h-identities">
    <h2 id="h-identities">${t('account.providers')}</h2>
    ${
      identities.length
        ? html`<ul class="sessions">
            ${identities.map(
              (i) =>
                html`<li>
                  <div>
                    <div translate="no">${i.display_name}</div>
                    <div class="meta">
                      ${i.email === null ? t('account.providers.no_email') : html`<span translate="no">${i.email}</span>`} &middot; ${lastUsed(i.last_used_at)}
                    </div>
                  </div>
                  <form method="post" action="/account/providers/unlink">
                    <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="id" value="${i.id}" />
                    <button type="submit" class="secondary" aria-label="${t('account.providers.unlink_one', { provider: i.display_name })}">
                      ${t('account.providers.unlink')}
                    </button>
                  </form>
                </li>`,
            )}
          </ul>`
        : html`<p>${t('account.providers.none')}</p>`
    }
    ${unlinked.map(
      (p) =>
        html`<form method="post" action="/account/providers/link">
          <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="provider" value="${p.name}" />
          <button type="submit" class="secondary">${tm('account.providers.link', { provider: named(p) })}</button>
        </form>`,
    )}
  </section>`;
}
