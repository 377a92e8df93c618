/**
 * The console's accounts: search and page through them (keyset paging: the millionth account
 * costs what the first does), open one, and change it with the operations the CLI uses:
 * disable/enable, promote/demote, reset TOTP, resend the confirmation link, end sessions, remove
 * a passkey, make and revoke app passwords and API keys. The last administrator is protected here as everywhere (the core refuses).
 */
import type { Context } from 'koa';
import type { AccountView } from '../../../core';
import { field, html, type Html, tm } from '../html';
import { t } from '../look';
import { see, str } from '../kit';
import { confirmAddress, needsConfirming } from '../confirm-return';
import { apiKeyLifetimeField, chosenLifetime } from '../credential-forms';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, data, dataTable, when, yesNo } from './kit';
import type { PageKit } from '../kit';

const button = actionButton;

/** An account's credentials of one kind (passkeys, app passwords): name, made, last used, and one button each. */
function credentialTable<C extends { name: string; created_at: string; last_used_at: string | null }>(
  list: readonly C[],
  none: Html,
  [made, action]: [string, string],
  buttonFor: (c: C) => Html,
): Html {
  if (list.length === 0) return none;
  return dataTable(
    [t('admin.name'), made, t('admin.last_used'), { label: action, quiet: true }],
    list.map(
      (c) =>
        html`<tr>
          <td translate="no">${c.name}</td>
          <td>${when(c.created_at)}</td>
          <td>${when(c.last_used_at)}</td>
          <td class="actions">${buttonFor(c)}</td>
        </tr>`,
    ),
  );
}

export function registerConsoleAccounts(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const listPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    const after = typeof ctx.query.after === 'string' ? ctx.query.after : undefined;
    const { accounts, next } = await core.accounts.search(a.actor, { q, after, limit: 25 });
    const rows = accounts.map(
      (v) =>
        html`<tr>
          <td><a href="/admin/accounts/${v.reference_id}" translate="no">${v.email}</a></td>
          <td class="wide-only" translate="no">${v.name}</td>
          <td>${t(v.administrator ? 'admin.accounts.role_admin' : 'admin.accounts.role_member')}${v.disabled ? t('admin.accounts.role_disabled') : ''}</td>
          <td class="wide-only">${yesNo(v.totp_enabled)}</td>
          <td class="wide-only">${when(v.created_at)}</td>
        </tr>`,
    );
    const nextLink = next
      ? html`<p class="links">
          <a href="/admin/accounts?${new URLSearchParams({ ...(q ? { q } : {}), after: next }).toString()}">${t('admin.accounts.next_page')}</a>
        </p>`
      : '';
    c.show(
      ctx,
      a,
      'accounts',
      t('admin.nav.accounts'),
      html`<section>
          <form method="get" action="/admin/accounts" class="search" role="search">
            ${field('q', t('admin.accounts.search_label'), { value: q, required: false, maxlength: 200 })}<button type="submit">
              ${t('admin.accounts.search')}
            </button>
          </form>
        </section>
        <section>
          ${
            accounts.length === 0
              ? html`<p>${t('admin.accounts.none')}</p>`
              : html`${dataTable(
                  [
                    t('admin.email'),
                    { label: t('admin.name'), wide: true },
                    t('admin.accounts.role'),
                    { label: t('admin.accounts.totp'), wide: true },
                    { label: t('admin.created'), wide: true },
                  ],
                  rows,
                )}`
          }
          ${after ? html`<p class="links"><a href="/admin/accounts${q ? `?q=${encodeURIComponent(q)}` : ''}">${t('admin.accounts.first_page')}</a></p>` : ''}${nextLink}
        </section>
        <p class="links"><a href="/admin/invitations">${t('admin.invitations.invite')}</a></p>`,
      o,
    );
  };
  c.get('/admin', 'accounts', async (ctx, a) => listPage(ctx, a));
  c.get('/admin/accounts', 'accounts', async (ctx, a) => listPage(ctx, a));

  /**
   * The managed groups a person is in (the ones that grant access; their own dedicated group is
   * not one), each with `through`: empty when they are a member themselves, else the groups
   * directly inside it that they are in (a person in engineering, inside staff: staff "through
   * engineering").
   */
  const managedGroupsOf = async (a: Admin, reference: string) => {
    const managed = new Set((await core.groups.managed(a.actor)).map((g) => g.reference_id));
    return (await core.accounts.groupsOf(a.actor, reference))
      .filter((g) => managed.has(g.reference_id))
      .map((g) => ({ ...g, through: g.direct ? [] : g.through }));
  };

  const accountPage = async (ctx: Context, a: Admin, id: string, o: { status?: number; error?: string; top?: Html } = {}) => {
    const v: AccountView = await core.accounts.byReference(a.actor, id);
    const { sessions } = await core.accounts.sessions(a.actor, v.email);
    const passkeys = await core.passkeys.list(a.actor, v.email);
    const appPasswords = await core.accounts.appPasswords.list(a.actor, v.email);
    const apiKeys = await core.accounts.apiKeys.list(a.actor, v.email);
    const groups = await managedGroupsOf(a, v.reference_id);
    // An account a directory source brought: its name, email, username and password are the directory's (the core refuses them here).
    const fromSource = await core.sources.ofAccount(a.actor, v.reference_id);
    const base = `/admin/accounts/${v.reference_id}`;
    const csrf = a.csrf;
    const actions: Html[] = [
      v.disabled
        ? button(csrf, `${base}/enable`, t('admin.account.enable'))
        : button(csrf, `${base}/disable`, t('admin.account.disable'), { confirm: t('admin.account.disable_confirm') }),
      v.administrator
        ? button(csrf, `${base}/demote`, t('admin.account.demote'), { confirm: t('admin.account.demote_confirm') })
        : button(csrf, `${base}/promote`, t('admin.account.promote'), { confirm: t('admin.account.promote_confirm') }),
      v.totp_enabled ? button(csrf, `${base}/totp-reset`, t('admin.account.totp_reset'), { confirm: t('admin.account.totp_reset_confirm') }) : html``,
      v.email_verified ? html`` : button(csrf, `${base}/verification`, t('admin.account.resend')),
      button(csrf, `${base}/delete`, t('admin.account.delete'), { confirm: t('admin.account.delete_confirm') }),
      // A directory's person is the directory's to remove: here only on purpose (its next sync may bring it back).
      fromSource === null
        ? html``
        : button(csrf, `${base}/delete`, t('admin.account.delete_force'), {
            confirm: t('admin.account.delete_force_confirm'),
            hidden: { force: 'yes' },
          }),
      // For someone who lost every way in: a one-time link to add a passkey or a password (shown once, below).
      v.disabled ? html`` : button(csrf, `${base}/recovery-link`, t('admin.account.recovery'), { confirm: t('admin.account.recovery_confirm') }),
    ];
    c.show(
      ctx,
      a,
      'accounts',
      v.email,
      html`${o.top ?? ''}
        <section aria-labelledby="h-details">
          <h2 id="h-details">${t('admin.account.details')}</h2>
          ${
            fromSource === null
              ? ''
              : html`<p class="notice info" id="account-source">
                  ${tm('admin.account.from_source', { source: html`<a href="/admin/sources" translate="no">${fromSource.source}</a>` })}
                  ${t(fromSource.gone ? 'admin.account.source_gone' : 'admin.account.source_owns')}
                </p>`
          }
          <dl>
            <dt>${t('admin.name')}</dt>
            <dd translate="no">${v.name}</dd>
            <dt>${t('admin.account.username')}</dt>
            <dd id="account-username" translate="no">${v.username}</dd>
            <dt>${t('admin.email')}</dt>
            <dd translate="no">${v.email}</dd>
            <dt>${t('admin.account.confirmed')}</dt>
            <dd>${yesNo(v.email_verified)}</dd>
            <dt>${t('admin.account.administrator')}</dt>
            <dd>${yesNo(v.administrator)}</dd>
            <dt>${t('admin.account.disabled')}</dt>
            <dd>${yesNo(v.disabled)}</dd>
            <dt>${t('admin.account.two_factor')}</dt>
            <dd>${t(v.totp_enabled ? 'admin.on' : 'admin.off')}</dd>
            <dt>${t('admin.nav.groups')}</dt>
            <dd id="account-groups">
              ${
                groups.length === 0
                  ? t('admin.account.no_groups')
                  : groups.map(
                      (g, i) =>
                        html`${i > 0 ? ', ' : ''}<a href="/admin/groups/${g.reference_id}" translate="no">${g.name}</a>${
                            g.through.length === 0
                              ? ''
                              : html` <span class="meta">${tm('admin.account.through', { groups: data(g.through.join(', ')) })}</span>`
                          }`,
                    )
              }
            </dd>
            <dt>${t('admin.created')}</dt>
            <dd>${when(v.created_at)}</dd>
            <dt>${t('admin.account.id')}</dt>
            <dd><code>${v.reference_id}</code></dd>
          </dl>
          <div class="links">${actions}</div>
          ${
            fromSource !== null
              ? ''
              : html`<form method="post" action="${base}/username">
                  <input type="hidden" name="csrf" value="${csrf}" />
                  ${field('username', t('admin.account.new_username'), { autocomplete: 'off', maxlength: 128 })}
                  <button type="submit" class="secondary">${t('admin.account.change_username')}</button>
                </form>`
          }
        </section>
        <section aria-labelledby="h-sessions">
          <h2 id="h-sessions">${t('admin.account.sessions')}</h2>
          ${
            sessions.length === 0
              ? html`<p>${t('admin.account.no_session')}</p>`
              : html`${dataTable(
                  [
                    t('admin.last_used'),
                    t('admin.account.session_from'),
                    t('admin.account.session_browser'),
                    { label: t('admin.account.session_end'), quiet: true },
                  ],
                  sessions.map(
                    (x) =>
                      html`<tr>
                        <td>${when(x.last_used_at)}</td>
                        ${x.client === null ? html`<td>${t('admin.unknown')}</td>` : html`<td translate="no">${x.client}</td>`}
                        ${x.user_agent === null ? html`<td>${t('admin.unknown')}</td>` : html`<td translate="no">${x.user_agent.slice(0, 60)}</td>`}
                        <td class="actions">${button(csrf, `${base}/sessions/end`, t('admin.account.sign_out'), { hidden: { session_id: x.id } })}</td>
                      </tr>`,
                  ),
                )}`
          }
        </section>
        <section aria-labelledby="h-passkeys">
          <h2 id="h-passkeys">${t('admin.account.passkeys')}</h2>
          ${credentialTable(passkeys, html`<p>${t('admin.none')}</p>`, [t('admin.account.added'), t('admin.remove')], (p) =>
            button(csrf, `${base}/passkeys/remove`, t('admin.remove'), { confirm: t('admin.account.passkey_remove_confirm'), hidden: { passkey_id: p.id } }),
          )}
        </section>
        <section aria-labelledby="h-app-passwords">
          <h2 id="h-app-passwords">${t('admin.account.app_passwords')}</h2>
          ${credentialTable(appPasswords, html`<p>${t('admin.account.no_app_passwords')}</p>`, [t('admin.account.made'), t('admin.revoke')], (p) =>
            button(csrf, `${base}/app-passwords/revoke`, t('admin.revoke'), {
              confirm: tm('admin.account.app_password_revoke_confirm', { name: data(p.name) }),
              hidden: { app_password_id: p.id },
            }),
          )}
          <form method="post" action="${base}/app-passwords">
            <input type="hidden" name="csrf" value="${csrf}" />
            ${field('app_password_name', t('admin.account.app_password_name'), { autocomplete: 'off', maxlength: 100 })}
            <button type="submit" class="secondary">${t('admin.account.make_app_password')}</button>
          </form>
        </section>
        <section aria-labelledby="h-api-keys">
          <h2 id="h-api-keys">${t('admin.account.api_keys')}</h2>
          ${
            apiKeys.length === 0
              ? html`<p>${t('admin.none')}</p>`
              : dataTable(
                  [t('admin.name'), t('admin.account.made'), t('admin.account.expires'), t('admin.last_used'), { label: t('admin.revoke'), quiet: true }],
                  apiKeys.map(
                    (k) =>
                      html`<tr>
                        <td translate="no">${k.name}</td>
                        <td>${when(k.created_at)}</td>
                        <td>${when(k.expires_at)}</td>
                        <td>${when(k.last_used_at)}</td>
                        <td class="actions">
                          ${button(csrf, `${base}/api-keys/revoke`, t('admin.revoke'), {
                            confirm: tm('admin.account.api_key_revoke_confirm', { name: data(k.name) }),
                            hidden: { api_key_id: k.id },
                          })}
                        </td>
                      </tr>`,
                  ),
                )
          }
          <form method="post" action="${base}/api-keys">
            <input type="hidden" name="csrf" value="${csrf}" />
            ${field('api_key_name', t('admin.account.api_key_name'), { autocomplete: 'off', maxlength: 100 })} ${apiKeyLifetimeField('api_key_expires')}
            <button type="submit" class="secondary">${t('admin.account.make_api_key')}</button>
          </form>
        </section>
        <p class="links"><a href="/admin/accounts">${t('admin.account.all')}</a></p>`,
      o,
    );
  };
  c.get('/admin/accounts/:id', 'accounts', async (ctx, a) => accountPage(ctx, a, ctx.params.id));

  /** An account's change: the id in the path, the CLI's operation by email, back to the account with a fixed message. */
  const change = (suffix: string, run: (a: Admin, email: string, body: unknown) => Promise<string>, dangerous = false) =>
    c.post(
      `/admin/accounts/:id/${suffix}`,
      async (ctx, a, body) => {
        if (dangerous) assertConfirmed(body);
        const v = await core.accounts.byReference(a.actor, ctx.params.id);
        return `/admin/accounts/${v.reference_id}?done=${await run(a, v.email, body)}`;
      },
      (ctx, a, e) => accountPage(ctx, a, ctx.params.id, e),
    );
  // Deleted: back to the list (the account's own page is gone). A directory's person is deleted
  // only with the box ticked, which the button says (the core refuses it otherwise).
  c.post(
    '/admin/accounts/:id/delete',
    async (ctx, a, body) => {
      assertConfirmed(body);
      const v = await core.accounts.byReference(a.actor, ctx.params.id);
      await core.accounts.delete(a.actor, v.email, { force: str(body, 'force') === 'yes' });
      return '/admin/accounts?done=account_deleted';
    },
    (ctx, a, e) => accountPage(ctx, a, ctx.params.id, e),
  );
  change('disable', async (a, email) => (await core.accounts.setDisabled(a.actor, email, true), 'disabled'), true);
  change('enable', async (a, email) => (await core.accounts.setDisabled(a.actor, email, false), 'enabled'));
  change('promote', async (a, email) => (await core.accounts.promote(a.actor, email), 'promoted'), true);
  change('demote', async (a, email) => (await core.accounts.demote(a.actor, email), 'demoted'), true);
  change('totp-reset', async (a, email) => (await core.accounts.resetTotp(a.actor, email), 'totp_reset'), true);
  change('username', async (a, email, body) => (await core.accounts.setUsername(a.actor, email, str(body, 'username')), 'username_changed'));
  change(
    'app-passwords/revoke',
    async (a, email, body) => (await core.accounts.appPasswords.revoke(a.actor, email, str(body, 'app_password_id')), 'app_password_revoked'),
    true,
  );
  change('api-keys/revoke', async (a, email, body) => (await core.accounts.apiKeys.revoke(a.actor, email, str(body, 'api_key_id')), 'api_key_revoked'), true);
  // Made here, a secret is shown on the answer (not a redirect): this once only.
  const makeSecret = (
    suffix: string,
    heading: 'admin.account.made_app_password' | 'admin.account.made_api_key',
    id: string,
    make: (a: Admin, email: string, body: unknown) => Promise<{ view: { name: string }; secret: string }>,
  ) =>
    kit.post(`/admin/accounts/:id/${suffix}`, async (ctx) => {
      await c.run(
        ctx,
        (ctx2, a2, e) => accountPage(ctx2, a2, ctx.params.id, e),
        async (a, body) => {
          const v = await core.accounts.byReference(a.actor, ctx.params.id);
          let r: Awaited<ReturnType<typeof make>>;
          try {
            r = await make(a, v.email, body);
          } catch (err) {
            // A new way in, long after this administrator signed in: confirm it is them, then back here.
            if (needsConfirming(err)) return see(ctx, confirmAddress(`/admin/accounts/${v.reference_id}`));
            throw err;
          }
          return accountPage(ctx, a, v.reference_id, {
            top: html`<section class="notice success" aria-labelledby="h-made">
              <h2 id="h-made">${tm(heading, { name: data(r.view.name) })}</h2>
              <p>${tm('admin.account.give_secret', { email: data(v.email) })}</p>
              <p class="secret-once" id="${id}">${r.secret}</p>
            </section>`,
          });
        },
      );
    });
  makeSecret('app-passwords', 'admin.account.made_app_password', 'app-password', (a, email, body) =>
    core.accounts.appPasswords.add(a.actor, email, { name: str(body, 'app_password_name') }),
  );
  makeSecret('api-keys', 'admin.account.made_api_key', 'api-key', async (a, email, body) =>
    core.accounts.apiKeys.add(a.actor, email, { name: str(body, 'api_key_name'), expiresInSeconds: chosenLifetime(str(body, 'api_key_expires')) }),
  );
  // A recovery link, shown on the answer this once (a secret: anyone holding it opens the account).
  kit.post('/admin/accounts/:id/recovery-link', async (ctx) => {
    await c.run(
      ctx,
      (ctx2, a2, e) => accountPage(ctx2, a2, ctx.params.id, e),
      async (a, body) => {
        assertConfirmed(body);
        const v = await core.accounts.byReference(a.actor, ctx.params.id);
        const made = await core.accounts.recoveryLink(a.actor, v.email);
        return accountPage(ctx, a, v.reference_id, {
          top: html`<section class="notice success" aria-labelledby="h-made">
            <h2 id="h-made">${tm('admin.account.recovery_made', { email: data(v.email) })}</h2>
            <p>${t('admin.account.recovery_give', { until: when(made.expires_at) })}</p>
            <p class="secret-once" id="recovery-link">${made.link}</p>
          </section>`,
        });
      },
    );
  });
  change('verification', async (a, email) => (await core.accounts.sendVerification(a.actor, email), 'verification'));
  change('sessions/end', async (a, email, body) => (await core.accounts.revokeSession(a.actor, email, str(body, 'session_id')), 'session_ended'));
  change('passkeys/remove', async (a, email, body) => (await core.passkeys.remove(a.actor, email, str(body, 'passkey_id')), 'passkey_removed'), true);
}
