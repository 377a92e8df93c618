/**
 * The console's accounts: search and page through them (keyset paging: the millionth account
 * costs what the first does), open one, and change it with the operations the CLI uses:
 * disable/enable, promote/demote, reset TOTP, resend the confirmation link, end sessions, remove
 * a passkey, make and revoke app passwords and API keys. The last administrator is protected here as everywhere (the core refuses).
 */
import type { Context } from 'koa';
import type { AccountView } from '../../../core';
import { field, html, type Html } from '../html';
import { see, str } from '../kit';
import { confirmAddress, needsConfirming } from '../confirm-return';
import { apiKeyLifetimeField, chosenLifetime } from '../credential-forms';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable } from './kit';
import type { PageKit } from '../kit';

const date = (iso: string | null) => (iso === null ? 'never' : iso.replace('T', ' ').slice(0, 16));
const yes = (b: boolean) => (b ? 'yes' : 'no');
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
    ['Name', made, 'Last used (UTC)', { label: action, quiet: true }],
    list.map(
      (c) =>
        html`<tr>
          <td>${c.name}</td>
          <td>${date(c.created_at)}</td>
          <td>${date(c.last_used_at)}</td>
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
          <td><a href="/admin/accounts/${v.reference_id}">${v.email}</a></td>
          <td class="wide-only">${v.name}</td>
          <td>${v.administrator ? 'administrator' : 'member'}${v.disabled ? ', disabled' : ''}</td>
          <td class="wide-only">${yes(v.totp_enabled)}</td>
          <td class="wide-only">${date(v.created_at)}</td>
        </tr>`,
    );
    const nextLink = next
      ? html`<p class="links"><a href="/admin/accounts?${new URLSearchParams({ ...(q ? { q } : {}), after: next }).toString()}">Next page</a></p>`
      : '';
    c.show(
      ctx,
      a,
      'accounts',
      'Accounts',
      html`<section>
          <form method="get" action="/admin/accounts" class="search" role="search">
            ${field('q', 'Search by email or name', { value: q, required: false, maxlength: 200 })}<button type="submit">Search</button>
          </form>
        </section>
        <section>
          ${
            accounts.length === 0
              ? html`<p>No account matches.</p>`
              : html`${dataTable(['Email', { label: 'Name', wide: true }, 'Role', { label: 'TOTP', wide: true }, { label: 'Created (UTC)', wide: true }], rows)}`
          }
          ${after ? html`<p class="links"><a href="/admin/accounts${q ? `?q=${encodeURIComponent(q)}` : ''}">First page</a></p>` : ''}${nextLink}
        </section>
        <p class="links"><a href="/admin/invitations">Invite someone</a></p>`,
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
        ? button(csrf, `${base}/enable`, 'Enable')
        : button(csrf, `${base}/disable`, 'Disable', { confirm: 'Disable this account and end its sessions' }),
      v.administrator
        ? button(csrf, `${base}/demote`, 'Remove administrator', { confirm: 'Take away administration' })
        : button(csrf, `${base}/promote`, 'Make administrator', { confirm: 'Make this account an administrator' }),
      v.totp_enabled ? button(csrf, `${base}/totp-reset`, 'Reset two-factor', { confirm: 'Turn two-factor off and end its sessions' }) : html``,
      v.email_verified ? html`` : button(csrf, `${base}/verification`, 'Resend confirmation link'),
      button(csrf, `${base}/delete`, 'Delete account', { confirm: 'Delete this account and everything it holds (cannot be undone)' }),
      // A directory's person is the directory's to remove: here only on purpose (its next sync may bring it back).
      fromSource === null
        ? html``
        : button(csrf, `${base}/delete`, 'Delete even so', {
            confirm: 'Delete it although the directory still manages it (its next sync may bring it back)',
            hidden: { force: 'yes' },
          }),
      // For someone who lost every way in: a one-time link to add a passkey or a password (shown once, below).
      v.disabled ? html`` : button(csrf, `${base}/recovery-link`, 'Make a recovery link', { confirm: 'Make a one-time link that opens this account' }),
    ];
    c.show(
      ctx,
      a,
      'accounts',
      v.email,
      html`${o.top ?? ''}
        <section aria-labelledby="h-details">
          <h2 id="h-details">Details</h2>
          ${
            fromSource === null
              ? ''
              : html`<p class="notice info" id="account-source">
                  From the directory source <a href="/admin/sources">${fromSource.source}</a>: change it there.
                  ${
                    fromSource.gone
                      ? 'The directory no longer has this person, so the account is disabled here.'
                      : 'Its name, email address, username and password are the directory’s.'
                  }
                </p>`
          }
          <dl>
            <dt>Name</dt>
            <dd>${v.name}</dd>
            <dt>Username</dt>
            <dd id="account-username">${v.username}</dd>
            <dt>Email</dt>
            <dd>${v.email}</dd>
            <dt>Confirmed</dt>
            <dd>${yes(v.email_verified)}</dd>
            <dt>Administrator</dt>
            <dd>${yes(v.administrator)}</dd>
            <dt>Disabled</dt>
            <dd>${yes(v.disabled)}</dd>
            <dt>Two-factor</dt>
            <dd>${v.totp_enabled ? 'on' : 'off'}</dd>
            <dt>Groups</dt>
            <dd id="account-groups">
              ${
                groups.length === 0
                  ? 'none'
                  : groups.map(
                      (g, i) =>
                        html`${i > 0 ? ', ' : ''}<a href="/admin/groups/${g.reference_id}">${g.name}</a>${
                            g.through.length === 0 ? '' : html` <span class="meta">(through ${g.through.join(', ')})</span>`
                          }`,
                    )
              }
            </dd>
            <dt>Created</dt>
            <dd>${date(v.created_at)} UTC</dd>
            <dt>Id</dt>
            <dd><code>${v.reference_id}</code></dd>
          </dl>
          <div class="links">${actions}</div>
          ${
            fromSource !== null
              ? ''
              : html`<form method="post" action="${base}/username">
                  <input type="hidden" name="csrf" value="${csrf}" />
                  ${field('username', 'New username', { autocomplete: 'off', maxlength: 128 })}
                  <button type="submit" class="secondary">Change username</button>
                </form>`
          }
        </section>
        <section aria-labelledby="h-sessions">
          <h2 id="h-sessions">Sessions</h2>
          ${
            sessions.length === 0
              ? html`<p>No open session.</p>`
              : html`${dataTable(
                  ['Last used (UTC)', 'From', 'Browser', { label: 'End', quiet: true }],
                  sessions.map(
                    (x) =>
                      html`<tr>
                        <td>${date(x.last_used_at)}</td>
                        <td>${x.client ?? 'unknown'}</td>
                        <td>${(x.user_agent ?? 'unknown').slice(0, 60)}</td>
                        <td class="actions">${button(csrf, `${base}/sessions/end`, 'Sign out', { hidden: { session_id: x.id } })}</td>
                      </tr>`,
                  ),
                )}`
          }
        </section>
        <section aria-labelledby="h-passkeys">
          <h2 id="h-passkeys">Passkeys</h2>
          ${credentialTable(passkeys, html`<p>None.</p>`, ['Added (UTC)', 'Remove'], (p) =>
            button(csrf, `${base}/passkeys/remove`, 'Remove', { confirm: 'Remove this passkey', hidden: { passkey_id: p.id } }),
          )}
        </section>
        <section aria-labelledby="h-app-passwords">
          <h2 id="h-app-passwords">App passwords</h2>
          ${credentialTable(
            appPasswords,
            html`<p>None: the account binds to LDAP with its password (if it has no second factor).</p>`,
            ['Made (UTC)', 'Revoke'],
            (p) => button(csrf, `${base}/app-passwords/revoke`, 'Revoke', { confirm: `Revoke the app password ${p.name}`, hidden: { app_password_id: p.id } }),
          )}
          <form method="post" action="${base}/app-passwords">
            <input type="hidden" name="csrf" value="${csrf}" />
            ${field('app_password_name', 'Which app is it for?', { autocomplete: 'off', maxlength: 100 })}
            <button type="submit" class="secondary">Make an app password</button>
          </form>
        </section>
        <section aria-labelledby="h-api-keys">
          <h2 id="h-api-keys">API keys</h2>
          ${
            apiKeys.length === 0
              ? html`<p>None.</p>`
              : dataTable(
                  ['Name', 'Made (UTC)', 'Expires (UTC)', 'Last used (UTC)', { label: 'Revoke', quiet: true }],
                  apiKeys.map(
                    (k) =>
                      html`<tr>
                        <td>${k.name}</td>
                        <td>${date(k.created_at)}</td>
                        <td>${k.expires_at === null ? 'never' : date(k.expires_at)}</td>
                        <td>${date(k.last_used_at)}</td>
                        <td class="actions">
                          ${button(csrf, `${base}/api-keys/revoke`, 'Revoke', { confirm: `Revoke the API key ${k.name}`, hidden: { api_key_id: k.id } })}
                        </td>
                      </tr>`,
                  ),
                )
          }
          <form method="post" action="${base}/api-keys">
            <input type="hidden" name="csrf" value="${csrf}" />
            ${field('api_key_name', 'Which script is it for?', { autocomplete: 'off', maxlength: 100 })} ${apiKeyLifetimeField('api_key_expires')}
            <button type="submit" class="secondary">Make an API key</button>
          </form>
        </section>
        <p class="links"><a href="/admin/accounts">All accounts</a></p>`,
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
    noun: string,
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
              <h2 id="h-made">The ${noun} for ${r.view.name}</h2>
              <p>Give it to ${v.email} now: it is shown only this once.</p>
              <p class="secret-once" id="${id}">${r.secret}</p>
            </section>`,
          });
        },
      );
    });
  makeSecret('app-passwords', 'app password', 'app-password', (a, email, body) =>
    core.accounts.appPasswords.add(a.actor, email, { name: str(body, 'app_password_name') }),
  );
  makeSecret('api-keys', 'API key', 'api-key', async (a, email, body) =>
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
            <h2 id="h-made">A recovery link for ${v.email}</h2>
            <p>
              Give it to them yourself (not by mail to the address, in case that is what they lost). It works once, until
              ${made.expires_at.replace('T', ' ').slice(0, 16)} UTC; opened, it gives 15 minutes to add a passkey or a password. It is shown only this once.
            </p>
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
