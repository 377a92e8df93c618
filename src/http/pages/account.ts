/** The account page: profile, passkeys, password, email, two-factor authentication, sessions. */
import type { Context } from 'koa';
import type { ActionResult, Caller } from '../../core';
import { field, form, html, Html, notice, page, raw } from './html';
import { DONE, type PageKit, refusal, see, send, str } from './kit';
import { t, useAccountLanguage } from './look';
import { LANGUAGES } from '../../core';
import { clearTokens, csrfToken, pageCaller, storeTokens, tokenCaller, tokensIn } from './session';
import type { SessionView } from '../../core';
import { passkeySection } from './passkey-forms';
import { identitySection } from './provider-forms';
import { apiKeySection, appPasswordSection } from './credential-forms';
import { sshKeySection } from './ssh-key-forms';
import { confirmAddress, needsConfirming } from './confirm-return';

/** A time as the page says it (UTC, to the minute). */
const when = (iso: string) => `${iso.replace('T', ' ').slice(0, 16)} UTC`;

/** A session's amr (RFC 8176) in words. */
function howSignedIn(amr: readonly string[]): string {
  const words: string[] = [];
  if (amr.includes('fed')) words.push('another provider');
  if (amr.includes('pwd')) words.push('password');
  if (amr.includes('hwk')) words.push('a passkey');
  if (amr.includes('otp')) words.push('a code');
  return words.length === 0 ? 'an unknown way' : words.join(' and ');
}

/** The account page's section of a form (a confirmation comes back to it). */
const SECTION_OF: Readonly<Record<string, string>> = {
  delete: 'delete-account',
  email: 'email',
  totp: 'two-factor',
  passkeys: 'passkeys',
  'app-passwords': 'app-passwords',
  'api-keys': 'api-keys',
  'ssh-keys': 'ssh-keys',
  shell: 'ssh-keys',
};

/** An account form's handler: a redirect's address, or the account page's state to show. */
type AccountHandler = (ctx: Context, caller: Caller, body: unknown) => Promise<AccountState | string>;

interface AccountState {
  status?: number;
  error?: string;
  info?: string;
  enrolment?: { secret: string; uri: string };
  recoveryCodes?: string[];
  /** An app password or API key just made: shown this once. */
  appPassword?: { name: string; secret: string };
  apiKey?: { name: string; secret: string };
}

/**
 * The account page's sections after a list of links to them (their ids): on a wide screen the list
 * stays beside two columns of sections, on a phone it heads the one column. The order is the
 * reading and tabbing order at every width (columns fill top to bottom, left then right).
 */
function contents(parts: ReadonlyArray<[id: string, title: string, body: Html | '']>): Html {
  const shown = parts.filter(([, , body]) => body !== '' && body.html.trim() !== '');
  return html`<div class="account-layout">
    <nav class="toc" aria-label="${t('layout.sections')}">
      <ul>
        ${shown.map(([id, title]) => html`<li><a href="#${id}">${title}</a></li>`)}
      </ul>
    </nav>
    <div class="account-sections">${shown.map(([, , body]) => body)}</div>
  </div>`;
}

/** What other page groups add to the account page: forms posted to it, errors shown on it. */
export interface AccountPages {
  post(path: string, handler: AccountHandler): void;
}

export function registerAccount(kit: PageKit): AccountPages {
  const { core, router, names, run, html_, post } = kit;
  // ---- Account -------------------------------------------------------------------------------
  const accountPage = async (ctx: Context, caller: Caller, o: AccountState = {}) => {
    const csrf = csrfToken(ctx, names);
    const me = await core.records.me(caller);
    const a = me.view.attributes as { email: string; username: string; name: string; email_verified: boolean; totp_enabled: boolean };
    const sessions: SessionView[] = [...((await run(caller, 'list_sessions', {})).sessions ?? [])];
    const passkeys = await core.passkeys.mine(caller);
    const [identities, providers, appPasswords, apiKeys, apps, sshKeys, shell] = await Promise.all([
      core.providers.identities(caller),
      core.providers.buttons(),
      core.accounts.appPasswords.listMine(caller),
      core.accounts.apiKeys.listMine(caller),
      run(caller, 'list_apps', {}).then((r) => r.apps ?? []),
      core.accounts.ssh.listMine(caller),
      core.accounts.ssh.shellMine(caller),
    ]);
    const profile = html`<section id="profile" aria-labelledby="h-profile">
      <h2 id="h-profile">Profile</h2>
      <dl>
        <dt>Name</dt>
        <dd>${a.name}</dd>
        <dt>Username</dt>
        <dd id="username">${a.username}</dd>
        <dt>Email</dt>
        <dd>${a.email}</dd>
        <dt>Confirmed</dt>
        <dd>${a.email_verified ? 'yes' : 'not yet'}</dd>
        <dt>Administrator</dt>
        <dd>${me.meta.administrator ? html`yes (<a href="/admin">the console</a>)` : 'no'}</dd>
      </dl>
      ${passkeys.recovery || a.email_verified ? '' : form('/account/request-verification', csrf, 'Send a confirmation link', [], { secondary: true })}
      ${
        passkeys.recovery
          ? ''
          : form(
              '/account/username',
              csrf,
              'Change username',
              [
                field('username', 'New username', {
                  autocomplete: 'username',
                  maxlength: 128,
                  hint: 'a-z and 0-9, then also . _ + - and one @: what apps that sign in by username (LDAP) ask for',
                }),
              ],
              { secondary: true },
            )
      }
    </section>`;
    // A recovery link's session sets a new password without the old one (the person lost it); an
    // account without a password sets its first after a recent sign-in, as any new way in.
    const setForm = form('/account/password', csrf, 'Set password', [
      field('password', 'New password', { type: 'password', autocomplete: 'new-password' }),
      field('passwordConfirm', 'New password again', { type: 'password', autocomplete: 'new-password' }),
    ]);
    const password =
      passkeys.hasPassword && !passkeys.recovery
        ? html`<section id="password" aria-labelledby="h-password">
            <h2 id="h-password">Password</h2>
            ${form('/account/password', csrf, 'Change password', [
              field('currentPassword', 'Current password', { type: 'password', autocomplete: 'current-password' }),
              field('password', 'New password', { type: 'password', autocomplete: 'new-password' }),
              field('passwordConfirm', 'New password again', { type: 'password', autocomplete: 'new-password' }),
            ])}
          </section>`
        : html`<section id="password" aria-labelledby="h-password">
            <h2 id="h-password">Password</h2>
            <p>
              ${
                passkeys.recovery
                  ? 'Set a new password: you do not need the old one. Then sign in with it.'
                  : 'Your account has no password: you sign in with a passkey or another provider. A password lets you sign in where those do not work.'
              }
            </p>
            ${passkeys.recent ? setForm : html`<p class="links"><a href="${confirmAddress('/account#password')}">Confirm it is you to set a password</a></p>`}
          </section>`;
    const email = html`<section id="email" aria-labelledby="h-email">
      <h2 id="h-email">Email address</h2>
      ${form('/account/email', csrf, 'Change email', [
        field('email', 'New email', { type: 'email', autocomplete: 'email' }),
        field('emailPassword', 'Password', { type: 'password', autocomplete: 'current-password' }),
      ])}
    </section>`;
    let totp: Html;
    if (o.recoveryCodes) {
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        ${notice('success', 'Two-factor authentication is on.')}
        <p><strong>Your recovery codes</strong> (each works once if you lose your authenticator). They are shown only this time: store them somewhere safe.</p>
        <ol class="codes" id="recovery-codes">
          ${o.recoveryCodes.map((c) => html`<li>${c}</li>`)}
        </ol>
      </section>`;
    } else if (o.enrolment) {
      const { default: QRCode } = await import('qrcode');
      const svg = await QRCode.toString(o.enrolment.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        <p>Scan this code with your authenticator app, or type the key in.</p>
        <figure class="qr" role="img" aria-label="QR code of the authenticator key">${raw(svg)}</figure>
        <p>Key: <span class="secret" id="totp-secret">${o.enrolment.secret}</span></p>
        ${form('/account/totp/confirm', csrf, 'Turn on', [field('otp', 'Code from the app', { inputmode: 'numeric', autocomplete: 'one-time-code', autofocus: true })])}
      </section>`;
    } else if (a.totp_enabled) {
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        <p>On: signing in asks for a code from your app.</p>
        ${form(
          '/account/totp/disable',
          csrf,
          'Turn off',
          [
            field('totpPassword', 'Password', { type: 'password', autocomplete: 'current-password' }),
            field('otp', 'Code from the app (or a recovery code)', { autocomplete: 'one-time-code' }),
          ],
          { secondary: true },
        )}
      </section>`;
    } else {
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">Two-factor authentication</h2>
        <p>Off. With it on, signing in also asks for a code from an authenticator app.</p>
        ${form('/account/totp/enroll', csrf, 'Set up', [field('totpPassword', 'Password', { type: 'password', autocomplete: 'current-password' })])}
      </section>`;
    }
    sessions.sort((x, y) => Number(y.current) - Number(x.current));
    const others = sessions.filter((x) => !x.current).length;
    const sessionList = html`<section id="sessions" aria-labelledby="h-sessions">
      <h2 id="h-sessions">Sessions</h2>
      <p>Every browser and app signed in to your account. End any you do not recognise, then change your password.</p>
      <ul class="sessions">
        ${sessions.map(
          (x) =>
            html`<li>
              <div>
                <div><strong>${x.device}</strong>${x.current ? html` <span class="badge">this browser</span>` : ''}</div>
                <div class="meta">from ${x.client ?? 'an unknown address'} &middot; signed in ${when(x.created_at)} with ${howSignedIn(x.amr)}</div>
                <div class="meta">last seen ${when(x.last_used_at)}</div>
              </div>
              ${
                x.current
                  ? ''
                  : html`<form method="post" action="/account/sessions/revoke">
                      <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="session_id" value="${x.id}" /><button
                        type="submit"
                        class="secondary"
                        aria-label="Sign out the session of ${x.device} from ${x.client ?? 'an unknown address'}"
                      >
                        Sign out
                      </button>
                    </form>`
              }
            </li>`,
        )}
      </ul>
      <p class="links">
        ${others > 0 ? form('/account/signout-others', csrf, 'Sign out everywhere else', [], { secondary: true }) : ''}
        ${form('/account/signout-everywhere', csrf, 'Sign out everywhere', [], { secondary: true })}
      </p>
    </section>`;
    const appList = html`<section id="apps" aria-labelledby="h-apps">
      <h2 id="h-apps">Connected apps</h2>
      ${
        apps.length === 0
          ? html`<p>No app has signed you in yet.</p>`
          : html`<p>Apps you signed in to with this account, and what they may read. Revoking one ends its access at once; it asks you again next time.</p>
              <ul class="sessions" id="app-list">
                ${apps.map(
                  (app) =>
                    html`<li>
                      <div>
                        <div><strong>${app.name}</strong> <span class="meta">${app.kind === 'oidc' ? 'OpenID Connect' : 'SAML'}</span></div>
                        <div class="meta">may read: ${app.scopes.join(', ') || 'who you are'}${app.offline ? ' · also while you are away' : ''}</div>
                        <div class="meta">since ${app.since ? when(app.since) : 'unknown'}</div>
                      </div>
                      <form method="post" action="/account/apps/revoke">
                        <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="kind" value="${app.kind}" /><input
                          type="hidden"
                          name="app_id"
                          value="${app.id}"
                        /><button type="submit" class="secondary" aria-label="Revoke the access of ${app.name}">Revoke</button>
                      </form>
                    </li>`,
                )}
              </ul>`
      }
    </section>`;
    const yourData = html`<section id="your-data" aria-labelledby="h-data">
      <h2 id="h-data">Your data</h2>
      <p>
        Download what this server holds about you as a JSON file: your account, groups, sessions, passkeys, app passwords and API keys (their names), linked
        providers, connected apps and the security log about you. It holds no password, key or secret.
      </p>
      ${form('/account/export', csrf, 'Download my data', [], { secondary: true })}
    </section>`;
    const deletion = html`<section id="delete-account" aria-labelledby="h-delete">
      <h2 id="h-delete">Delete your account</h2>
      <p>
        Your account and everything it holds go at once: sessions, passkeys, app passwords, API keys, linked providers and the apps' access. This cannot be
        undone.
      </p>
      ${form(
        '/account/delete',
        csrf,
        'Delete my account',
        [
          ...(passkeys.hasPassword
            ? [
                field('deletePassword', 'Password', {
                  type: 'password',
                  autocomplete: 'current-password',
                  hint: 'Or leave it empty and confirm with a passkey.',
                }),
              ]
            : []),
          html`<label class="check"><input type="checkbox" name="confirm" value="yes" required /> I want to delete my account</label>`,
        ],
        { secondary: true },
      )}
    </section>`;
    const chosen = await core.accounts.language.mine(caller);
    const language = html`<section id="language" aria-labelledby="h-language">
      <h2 id="h-language">${t('account.language')}</h2>
      <p class="meta">${t('account.language.intro')}</p>
      ${form(
        '/account/language',
        csrf,
        t('account.language.save'),
        [
          html`<div class="field">
            <label for="f-language">${t('account.language')}</label>
            <select id="f-language" name="language">
              <option value="" ${chosen === null ? raw('selected') : ''}>${t('account.language.browser')}</option>
              ${LANGUAGES.map((l) => html`<option value="${l}" lang="${l}" ${chosen === l ? raw('selected') : ''}>${t(`language.${l}`)}</option>`)}
            </select>
          </div>`,
        ],
        { secondary: true },
      )}
    </section>`;
    // Each part's section carries the id its entry in the page's contents links to.
    // A recovery link's session adds a passkey or a password only: no forms for the rest.
    const parts: Array<[id: string, title: string, body: Html | '']> = passkeys.recovery
      ? [
          ['profile', 'Profile', profile],
          ['passkeys', 'Passkeys', passkeySection(csrf, passkeys)],
          ['password', 'Password', password],
          ['sessions', 'Sessions', sessionList],
        ]
      : [
          ['profile', 'Profile', profile],
          ['language', t('account.language'), language],
          ['passkeys', 'Passkeys', passkeySection(csrf, passkeys)],
          ['providers', 'Other providers', identitySection(csrf, identities, providers)],
          // Without a password, TOTP and an email change (both confirmed by the password) wait until one is set.
          ['two-factor', 'Two-factor authentication', passkeys.hasPassword ? totp : ''],
          ['password', 'Password', password],
          ['email', 'Email address', passkeys.hasPassword ? email : ''],
          ['app-passwords', 'App passwords', appPasswordSection(csrf, appPasswords, o.appPassword, passkeys.recent)],
          ['api-keys', 'API keys', apiKeySection(csrf, apiKeys, o.apiKey, passkeys.recent)],
          ['ssh-keys', 'SSH keys', sshKeySection(csrf, sshKeys, shell, passkeys.recent)],
          ['sessions', 'Sessions', sessionList],
          ['apps', 'Connected apps', appList],
          ['your-data', 'Your data', yourData],
          ['delete-account', 'Delete your account', deletion],
        ];
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: t('account.title'), columns: true, signedIn: true, csrf, passkeys: true, administrator: me.meta.administrator === true },
        html`${notice('error', o.error)}${notice('success', o.info)}${contents(parts)}`,
      ),
    );
  };

  router.get('/account', html_, async (ctx) => {
    const caller = await pageCaller(ctx, core, names);
    if (!caller) return see(ctx, '/signin');
    await accountPage(ctx, caller, { info: ctx.query.done === 'language' ? t('account.language.done') : DONE[String(ctx.query.done)] });
  });

  /** An account form: signed in, or off to the sign-in page; errors show on the account page. */
  const accountPost = (path: string, handler: AccountHandler) =>
    post(path, async (ctx) => {
      const caller = await pageCaller(ctx, core, names);
      if (!caller) return see(ctx, '/signin');
      let outcome: AccountState | string;
      try {
        outcome = await handler(ctx, caller, ctx.request.body);
      } catch (err) {
        // Too long since the sign-in for this change: confirm it is you, then back to this form's section.
        if (needsConfirming(err)) {
          const section = SECTION_OF[path.split('/')[2] ?? ''];
          return see(ctx, confirmAddress(section ? `/account#${section}` : '/account'));
        }
        return accountPage(ctx, caller, refusal(err));
      }
      if (typeof outcome === 'string') return see(ctx, outcome);
      // A handler that opened a new session (keep) reads the page with its token.
      await accountPage(ctx, (ctx.state.renewed as Caller | undefined) ?? caller, outcome);
    });

  accountPost('/account/language', async (_ctx, caller, body) => {
    const { language } = await core.accounts.language.setMine(caller, str(body, 'language'));
    // The next page speaks the new choice (this request began in the old one).
    useAccountLanguage(language);
    return '/account?done=language#language';
  });

  /** Actions that answer a new session (password, email, TOTP): keep this browser signed in. */
  const keep = (ctx: Context, result: ActionResult) => {
    const tokens = tokensIn(result);
    if (!tokens) return;
    storeTokens(ctx, names, tokens);
    ctx.state.renewed = tokenCaller(ctx, tokens.token);
  };

  accountPost('/account/username', async (_ctx, caller, body) => {
    const me = await core.records.me(caller);
    await core.records.update(await core.auth.actor(caller), 'user_account', me.view.id, { username: str(body, 'username') });
    return '/account?done=username';
  });
  accountPost('/account/request-verification', async (_ctx, caller) => {
    await run(caller, 'request_verification', {});
    return '/account?done=verification';
  });
  accountPost('/account/password', async (ctx, caller, body) => {
    keep(
      ctx,
      await run(caller, 'change_password', {
        // The set form has no current password: the core's rule for setting one without it applies.
        ...(str(body, 'currentPassword') === '' ? {} : { currentPassword: str(body, 'currentPassword') }),
        password: str(body, 'password'),
        passwordConfirm: str(body, 'passwordConfirm'),
      }),
    );
    return '/account?done=password';
  });
  accountPost('/account/email', async (ctx, caller, body) => {
    keep(ctx, await run(caller, 'change_email', { email: str(body, 'email'), password: str(body, 'emailPassword') }));
    return '/account?done=email';
  });
  accountPost('/account/totp/enroll', async (_ctx, caller, body) => {
    const { totpSecret } = await run(caller, 'totp_enroll', { password: str(body, 'totpPassword') });
    return { enrolment: totpSecret };
  });
  accountPost('/account/totp/confirm', async (ctx, caller, body) => {
    let result: ActionResult;
    try {
      result = await run(caller, 'totp_confirm', { otp: str(body, 'otp').trim() });
    } catch (err) {
      // Too long since the password was entered: to the page that confirms it is you (accountPost).
      if (needsConfirming(err)) throw err;
      // A mistyped code keeps the enrolment in progress: the same QR code and key, not a new secret.
      const pending = await core.accounts.pendingTotp(caller);
      return { ...refusal(err), ...(pending ? { enrolment: pending } : {}) };
    }
    keep(ctx, result);
    return { recoveryCodes: [...(result.recoveryCodes ?? [])] };
  });
  accountPost('/account/totp/disable', async (ctx, caller, body) => {
    // The core tells a code from a recovery code.
    keep(ctx, await run(caller, 'totp_disable', { password: str(body, 'totpPassword'), otp: str(body, 'otp').trim() }));
    return '/account?done=totp_off';
  });
  accountPost('/account/sessions/revoke', async (_ctx, caller, body) => {
    await run(caller, 'revoke_session', { session_id: str(body, 'session_id') });
    return '/account?done=revoked';
  });
  accountPost('/account/signout-others', async (_ctx, caller) => {
    await run(caller, 'signout_others', {});
    return '/account?done=others#sessions';
  });
  accountPost('/account/apps/revoke', async (_ctx, caller, body) => {
    await run(caller, 'revoke_app', { kind: str(body, 'kind'), app_id: str(body, 'app_id') });
    return '/account?done=app_revoked#apps';
  });
  // The download: a JSON file, never cached, never shown inline (its text is the person's own data).
  post('/account/export', async (ctx) => {
    const caller = await pageCaller(ctx, core, names);
    if (!caller) return see(ctx, '/signin');
    const { data } = await run(caller, 'export_data', {});
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Disposition', 'attachment; filename="gatehouse-my-data.json"');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = JSON.stringify(data ?? {}, null, 2);
  });
  accountPost('/account/delete', async (ctx, caller, body) => {
    if (str(body, 'confirm') !== 'yes') return { status: 400, error: 'Tick the box to confirm; nothing was deleted.' };
    // No password: a passkey (or the password) entered again on the confirmation page, then back here to press again.
    await run(caller, 'delete_account', str(body, 'deletePassword') === '' ? {} : { password: str(body, 'deletePassword') });
    clearTokens(ctx, names);
    return '/signin?done=deleted';
  });
  accountPost('/account/signout-everywhere', async (ctx, caller) => {
    await run(caller, 'signout_everywhere', {});
    clearTokens(ctx, names);
    return '/signin?done=everywhere';
  });
  return { post: accountPost };
}
