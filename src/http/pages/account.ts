/** The account page: profile, passkeys, password, email, two-factor authentication, sessions. */
import type { Context } from 'koa';
import type { ActionResult, Caller } from '../../core';
import { field, form, html, Html, notice, page, raw, tm } from './html';
import { DONE, type KnownRefusals, type PageKit, refusal, see, send, str } from './kit';
import { look, t, useAccountLanguage } from './look';
import { LANGUAGES } from '../../core';
import { clearTokens, csrfToken, pageCaller, storeTokens, tokenCaller, tokensIn } from './session';
import type { SessionView } from '../../core';
import { passkeySection } from './passkey-forms';
import { identitySection } from './provider-forms';
import { apiKeySection, appPasswordSection } from './credential-forms';
import { sshKeySection } from './ssh-key-forms';
import { confirmAddress, needsConfirming } from './confirm-return';

/** A time as the reader's locale writes it. */
const when = (iso: string) => look().tr.dateTime(iso);

/**
 * A session's amr (RFC 8176) in words: the way it was opened (its first value: another provider,
 * a password, a passkey, or a code mailed to the address), then the second factor when it has two
 * ("mfa"): a passkey, or a code from the authenticator app.
 */
function howSignedIn(amr: readonly string[]): string {
  const first =
    amr[0] === 'fed'
      ? t('account.how.provider')
      : amr[0] === 'pwd'
        ? t('account.how.password')
        : amr[0] === 'hwk'
          ? t('account.how.passkey')
          : amr[0] === 'otp'
            ? t('account.how.mailed_code')
            : null;
  if (first === null) return t('account.how.unknown');
  if (!amr.includes('mfa') || amr[0] === 'hwk') return first;
  return t('account.how.both', { first, second: amr.includes('hwk') ? t('account.how.passkey') : t('account.how.app_code') });
}

/** A session's device: "Firefox on Windows" in the reader's words, else what its User-Agent says of itself. */
const deviceText = (x: SessionView): string =>
  x.browser && x.system
    ? t('account.sessions.device', { browser: x.browser, system: x.system })
    : (x.browser ?? x.system ?? (x.user_agent?.trim().slice(0, 60) || t('account.sessions.unknown_device')));

/** The device as the page shows it: a browser's or an app's own name alone is not words (marked so). */
const device = (x: SessionView): Html =>
  (x.browser && x.system) || !(x.browser ?? x.system ?? x.user_agent?.trim()) ? html`${deviceText(x)}` : html`<span translate="no">${deviceText(x)}</span>`;

/** Refusals of a person's own changes, said to the person (the core's words speak to an administrator). */
const OWN_REFUSALS: KnownRefusals = {
  managed_by_scim: 'pages.refused.managed_by_scim',
  managed_by_directory: 'pages.refused.managed_by_directory',
  last_administrator: 'pages.refused.last_administrator',
};

/** A success message by the name a redirect carries (`?done=`, no reflected text): kit.ts's one table. */
const doneMessage = (name: unknown): string | undefined => (typeof name === 'string' ? DONE[name] : undefined);

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
      <h2 id="h-profile">${t('account.profile')}</h2>
      <dl>
        <dt>${t('account.profile.name')}</dt>
        <dd translate="no">${a.name}</dd>
        <dt>${t('account.profile.username')}</dt>
        <dd id="username" translate="no">${a.username}</dd>
        <dt>${t('account.profile.email')}</dt>
        <dd translate="no">${a.email}</dd>
        <dt>${t('account.profile.confirmed')}</dt>
        <dd>${a.email_verified ? t('account.yes') : t('account.not_yet')}</dd>
        <dt>${t('account.profile.administrator')}</dt>
        <dd>
          ${me.meta.administrator ? tm('account.profile.administrator_yes', { console: html`<a href="/admin">${t('account.profile.console')}</a>` }) : t('account.no')}
        </dd>
      </dl>
      ${passkeys.recovery || a.email_verified ? '' : form('/account/request-verification', csrf, t('account.profile.send_confirmation'), [], { secondary: true })}
      ${
        passkeys.recovery
          ? ''
          : form(
              '/account/username',
              csrf,
              t('account.username.change'),
              [
                field('username', t('account.username.new'), {
                  autocomplete: 'username',
                  maxlength: 128,
                  hint: t('account.username.hint'),
                }),
              ],
              { secondary: true },
            )
      }
    </section>`;
    // A recovery link's session sets a new password without the old one (the person lost it); an
    // account without a password sets its first after a recent sign-in, as any new way in.
    const newPassword = [
      field('password', t('account.password.new'), { type: 'password', autocomplete: 'new-password' }),
      field('passwordConfirm', t('account.password.again'), { type: 'password', autocomplete: 'new-password' }),
    ];
    const setForm = form('/account/password', csrf, t('account.password.set'), newPassword);
    const password =
      passkeys.hasPassword && !passkeys.recovery
        ? html`<section id="password" aria-labelledby="h-password">
            <h2 id="h-password">${t('account.password')}</h2>
            ${form('/account/password', csrf, t('account.password.change'), [
              field('currentPassword', t('account.password.current'), { type: 'password', autocomplete: 'current-password' }),
              ...newPassword,
            ])}
          </section>`
        : html`<section id="password" aria-labelledby="h-password">
            <h2 id="h-password">${t('account.password')}</h2>
            <p>${passkeys.recovery ? t('account.password.recovery') : t('account.password.none')}</p>
            ${passkeys.recent ? setForm : html`<p class="links"><a href="${confirmAddress('/account#password')}">${t('account.password.confirm_first')}</a></p>`}
          </section>`;
    const email = html`<section id="email" aria-labelledby="h-email">
      <h2 id="h-email">${t('account.email')}</h2>
      ${form('/account/email', csrf, t('account.email.change'), [
        field('email', t('account.email.new'), { type: 'email', autocomplete: 'email' }),
        field('emailPassword', t('account.password'), { type: 'password', autocomplete: 'current-password' }),
      ])}
    </section>`;
    let totp: Html;
    if (o.recoveryCodes) {
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">${t('account.totp')}</h2>
        ${notice('success', t('account.totp.on_now'))}
        <p>${tm('account.totp.codes', { codes: html`<strong>${t('account.totp.codes_title')}</strong>` })}</p>
        <ol class="codes" id="recovery-codes">
          ${o.recoveryCodes.map((c) => html`<li>${c}</li>`)}
        </ol>
      </section>`;
    } else if (o.enrolment) {
      const { default: QRCode } = await import('qrcode');
      const svg = await QRCode.toString(o.enrolment.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">${t('account.totp')}</h2>
        <p>${t('account.totp.scan')}</p>
        <figure class="qr" role="img" aria-label="${t('account.totp.qr')}">${raw(svg)}</figure>
        <p>${tm('account.totp.key', { key: html`<span class="secret" id="totp-secret">${o.enrolment.secret}</span>` })}</p>
        ${form('/account/totp/confirm', csrf, t('account.totp.turn_on'), [
          field('otp', t('account.totp.code'), { inputmode: 'numeric', autocomplete: 'one-time-code', autofocus: true }),
        ])}
      </section>`;
    } else if (a.totp_enabled) {
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">${t('account.totp')}</h2>
        <p>${t('account.totp.on')}</p>
        ${form(
          '/account/totp/disable',
          csrf,
          t('account.totp.turn_off'),
          [
            field('totpPassword', t('account.password'), { type: 'password', autocomplete: 'current-password' }),
            field('otp', t('account.totp.code_or_recovery'), { autocomplete: 'one-time-code' }),
          ],
          { secondary: true },
        )}
      </section>`;
    } else {
      totp = html`<section id="two-factor" aria-labelledby="h-totp">
        <h2 id="h-totp">${t('account.totp')}</h2>
        <p>${t('account.totp.off')}</p>
        ${form('/account/totp/enroll', csrf, t('account.totp.set_up'), [
          field('totpPassword', t('account.password'), { type: 'password', autocomplete: 'current-password' }),
        ])}
      </section>`;
    }
    sessions.sort((x, y) => Number(y.current) - Number(x.current));
    const others = sessions.filter((x) => !x.current).length;
    const sessionList = html`<section id="sessions" aria-labelledby="h-sessions">
      <h2 id="h-sessions">${t('account.sessions')}</h2>
      <p>${t('account.sessions.intro')}</p>
      <ul class="sessions">
        ${sessions.map(
          (x) =>
            html`<li>
              <div>
                <div><strong>${device(x)}</strong>${x.current ? html` <span class="badge">${t('account.sessions.this_browser')}</span>` : ''}</div>
                <div class="meta">
                  ${t('account.sessions.signed_in', {
                    address: x.client ?? t('account.sessions.unknown_address'),
                    when: when(x.created_at),
                    how: howSignedIn(x.amr),
                  })}
                </div>
                <div class="meta">${t('account.sessions.last_seen', { when: when(x.last_used_at) })}</div>
              </div>
              ${
                x.current
                  ? ''
                  : html`<form method="post" action="/account/sessions/revoke">
                      <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="session_id" value="${x.id}" /><button
                        type="submit"
                        class="secondary"
                        aria-label="${t('account.sessions.sign_out_one', { device: deviceText(x), address: x.client ?? t('account.sessions.unknown_address') })}"
                      >
                        ${t('account.sessions.sign_out')}
                      </button>
                    </form>`
              }
            </li>`,
        )}
      </ul>
      <p class="links">
        ${others > 0 ? form('/account/signout-others', csrf, t('account.sessions.others'), [], { secondary: true }) : ''}
        ${form('/account/signout-everywhere', csrf, t('account.sessions.everywhere'), [], { secondary: true })}
      </p>
    </section>`;
    const appList = html`<section id="apps" aria-labelledby="h-apps">
      <h2 id="h-apps">${t('account.apps')}</h2>
      ${
        apps.length === 0
          ? html`<p>${t('account.apps.none')}</p>`
          : html`<p>${t('account.apps.intro')}</p>
              <ul class="sessions" id="app-list">
                ${apps.map(
                  (app) =>
                    html`<li>
                      <div>
                        <div><strong translate="no">${app.name}</strong> <span class="meta">${app.kind === 'oidc' ? 'OpenID Connect' : 'SAML'}</span></div>
                        <div class="meta">
                          ${t('account.apps.may_read', { scopes: app.scopes.join(', ') || t('account.apps.who_you_are') })}${app.offline ? ` · ${t('account.apps.offline')}` : ''}
                        </div>
                        <div class="meta">${app.since ? t('account.apps.since', { when: when(app.since) }) : t('account.apps.since_unknown')}</div>
                      </div>
                      <form method="post" action="/account/apps/revoke">
                        <input type="hidden" name="csrf" value="${csrf}" /><input type="hidden" name="kind" value="${app.kind}" /><input
                          type="hidden"
                          name="app_id"
                          value="${app.id}"
                        /><button type="submit" class="secondary" aria-label="${t('account.apps.revoke', { app: app.name })}">${t('account.revoke')}</button>
                      </form>
                    </li>`,
                )}
              </ul>`
      }
    </section>`;
    const yourData = html`<section id="your-data" aria-labelledby="h-data">
      <h2 id="h-data">${t('account.data')}</h2>
      <p>${t('account.data.intro')}</p>
      ${form('/account/export', csrf, t('account.data.download'), [], { secondary: true })}
    </section>`;
    const deletion = html`<section id="delete-account" aria-labelledby="h-delete">
      <h2 id="h-delete">${t('account.delete')}</h2>
      <p>${t('account.delete.intro')}</p>
      ${form(
        '/account/delete',
        csrf,
        t('account.delete.submit'),
        [
          ...(passkeys.hasPassword
            ? [
                field('deletePassword', t('account.password'), {
                  type: 'password',
                  autocomplete: 'current-password',
                  hint: t('account.delete.password_hint'),
                }),
              ]
            : []),
          html`<label class="check"><input type="checkbox" name="confirm" value="yes" required /> ${t('account.delete.confirm')}</label>`,
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
          ['profile', t('account.profile'), profile],
          ['passkeys', t('account.passkeys'), passkeySection(csrf, passkeys)],
          ['password', t('account.password'), password],
          ['sessions', t('account.sessions'), sessionList],
        ]
      : [
          ['profile', t('account.profile'), profile],
          ['language', t('account.language'), language],
          ['passkeys', t('account.passkeys'), passkeySection(csrf, passkeys)],
          ['providers', t('account.providers.short'), identitySection(csrf, identities, providers)],
          // Without a password, TOTP and an email change (both confirmed by the password) wait until one is set.
          ['two-factor', t('account.totp'), passkeys.hasPassword ? totp : ''],
          ['password', t('account.password'), password],
          ['email', t('account.email'), passkeys.hasPassword ? email : ''],
          ['app-passwords', t('account.app_passwords'), appPasswordSection(csrf, appPasswords, o.appPassword, passkeys.recent)],
          ['api-keys', t('account.api_keys'), apiKeySection(csrf, apiKeys, o.apiKey, passkeys.recent)],
          ['ssh-keys', t('account.ssh_keys'), sshKeySection(csrf, sshKeys, shell, passkeys.recent)],
          ['sessions', t('account.sessions'), sessionList],
          ['apps', t('account.apps'), appList],
          ['your-data', t('account.data'), yourData],
          ['delete-account', t('account.delete'), deletion],
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
    await accountPage(ctx, caller, { info: ctx.query.done === 'language' ? t('account.language.done') : doneMessage(ctx.query.done) });
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
        return accountPage(ctx, caller, refusal(err, undefined, OWN_REFUSALS));
      }
      if (typeof outcome === 'string') return see(ctx, outcome);
      // A handler that opened a new session (keep) reads the page with its token.
      await accountPage(ctx, (ctx.state.renewed as Caller | undefined) ?? caller, outcome);
    });

  accountPost('/account/language', async (_ctx, caller, body) => {
    // One choice: a repeated field (language=de&language=fr) is no language, not "the browser's".
    if (typeof (body as Record<string, unknown> | undefined)?.language !== 'string') return { status: 400, error: t('account.language.one') };
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
    if (str(body, 'confirm') !== 'yes') return { status: 400, error: t('account.delete.unticked') };
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
