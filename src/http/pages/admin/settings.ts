/** The console's server-wide switches and records: guest signup, sign-in by mail, the look, signing keys, the audit log. */
import path from 'node:path';
import type { Context } from 'koa';
import { AppError, isAppError } from '../../../errors';
import { LANGUAGES, type LookSource, type MessageKey } from '../../../core';
import { field, html, notice, raw, tm, type Html } from '../html';
import { message, type PageKit, str } from '../kit';
import { look, t } from '../look';
import { type Admin, assertConfirmed, confirmBox, type ConsoleKit, dataTable } from './kit';

/** What each check of the signup chain means, for the sentence that says why signup is closed. */
const CLOSED_BY: Readonly<Record<string, MessageKey>> = {
  signup_action_execute: 'settings.signup.closed_by.signup_action_execute',
  user_account_create: 'settings.signup.closed_by.user_account_create',
  usergroup_create: 'settings.signup.closed_by.usergroup_create',
  membership_refer: 'settings.signup.closed_by.membership_refer',
};

/** A command, a path or a name a system gave: written as it is typed, never translated. */
const code = (text: string): Html => html`<code>${text}</code>`;

const AUDIT_LIMIT = 100;
/** The audit page looks back at most this many days (about ten years). */
const AUDIT_MAX_DAYS = 3650;

/** The reader's translator (numbers in their locale). */
const tr = () => look().tr;

/** A refusal of the look's form in the reader's words: which field, and what it takes. */
function lookRefusal(err: unknown): unknown {
  if (!isAppError(err) || err.code !== 'invalid_input') return err;
  const said = err.template;
  const key = said.includes('{--brand-name}')
    ? 'settings.look.bad_name'
    : said.includes('{--brand-color}')
      ? 'settings.look.bad_color'
      : said.includes('{--default-language}')
        ? 'settings.look.bad_language'
        : null;
  return key === null ? err : new AppError('invalid_input', t(key));
}

export function registerConsoleSettings(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const signupPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const status = await core.signupStatus();
    const managed = await core.configFile.managedBy(a.actor);
    const managedBy = managed.of('action', 'user_account/signup');
    const byMail = await core.actions.signinByMailOpen();
    const byMailManagedBy = managed.of('action', 'user_account/signin_by_mail');
    c.show(
      ctx,
      a,
      'signup',
      t('settings.signup.title'),
      html`<section>
          <p id="signup-state">
            <strong>${t(status.open ? 'settings.signup.open' : 'settings.signup.closed')}</strong> ${
              status.open
                ? tm('settings.signup.open_text', { path: code('/signup') })
                : t('settings.signup.closed_text', { reason: t(CLOSED_BY[status.closedBy ?? ''] ?? 'settings.signup.closed_by.other') })
            }
          </p>
          <p>${tm('settings.signup.same_switch', { command: code('gatehouse action set-permission signup --guest on|off') })}</p>
          ${
            managedBy !== null
              ? html`<p class="notice info" id="signup-managed-by">
                  ${tm('settings.signup.managed', { file: html`<span translate="no">${managedBy}</span>` })}
                </p>`
              : html`<form method="post" action="/admin/signup" class="${status.open ? '' : 'danger'}">
                  <input type="hidden" name="csrf" value="${a.csrf}" /><input type="hidden" name="guest" value="${status.open ? 'off' : 'on'}" />
                  ${status.open ? '' : confirmBox(t('settings.signup.confirm_open'))}
                  <button type="submit" class="secondary">${t(status.open ? 'settings.signup.close' : 'settings.signup.open_button')}</button>
                </form>`
          }
        </section>
        <section id="signin-by-mail">
          <h2>${t('settings.by_mail.title')}</h2>
          <p id="signin-by-mail-state">
            <strong>${t(byMail ? 'settings.by_mail.on' : 'settings.by_mail.off')}</strong>
            ${t(byMail ? 'settings.by_mail.on_text' : 'settings.by_mail.off_text')}
          </p>
          <p>
            ${tm('settings.by_mail.same_switch', {
              flag: code('gatehouse serve --signin-by-mail'),
              command: code('gatehouse action set-permission signin_by_mail --guest on|off'),
            })}
          </p>
          ${
            byMailManagedBy !== null
              ? html`<p class="notice info">${tm('settings.by_mail.managed', { file: html`<span translate="no">${byMailManagedBy}</span>` })}</p>`
              : html`<form method="post" action="/admin/signin-by-mail">
                  <input type="hidden" name="csrf" value="${a.csrf}" /><input type="hidden" name="guest" value="${byMail ? 'off' : 'on'}" />
                  <button type="submit" class="secondary">${t(byMail ? 'settings.by_mail.turn_off' : 'settings.by_mail.turn_on')}</button>
                </form>`
          }
        </section>`,
      o,
    );
  };
  c.get('/admin/signup', 'signup', signupPage);
  c.post(
    '/admin/signin-by-mail',
    async (_ctx, a, body) => {
      const guest = str(body, 'guest') === 'on' ? 'on' : 'off';
      await core.actions.setPermission(a.actor, 'signin_by_mail', { guest });
      return `/admin/signup?done=signin_by_mail_${guest}`;
    },
    signupPage,
  );
  c.post(
    '/admin/signup',
    async (_ctx, a, body) => {
      const guest = str(body, 'guest') === 'on' ? 'on' : 'off';
      if (guest === 'on') assertConfirmed(body);
      await core.actions.setPermission(a.actor, 'signup', { guest });
      return `/admin/signup?done=signup_${guest === 'on' ? 'opened' : 'closed'}`;
    },
    signupPage,
  );

  /** Where a setting comes from, in the reader's words (a file by its name only; its whole path in the title). */
  const sourceText = (source: LookSource): string =>
    source.by === 'flag'
      ? t('settings.look.by_flag', { flag: `--${source.flag}` })
      : source.by === 'file'
        ? t('settings.look.by_file', { file: path.basename(source.file) })
        : source.by === 'console'
          ? t('settings.look.by_console')
          : t('settings.look.by_default');
  const sourceNote = (source: LookSource): Html =>
    html`<small class="meta" ${source.by === 'file' ? html`title="${source.file}"` : ''}>${sourceText(source)}</small>`;
  const fixed = (source: LookSource) => source.by === 'flag' || source.by === 'file';
  /** A setting a flag or a file sets: its value and where to change it, no field. */
  const shownValue = (id: string, label: string, value: Html, source: LookSource) =>
    html`<div class="field" id="${id}">
      <strong>${label}</strong>
      <span>${value}</span>
      ${sourceNote(source)}
    </div>`;

  const lookPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const look = await core.look.settings(a.actor);
    const { brandName, brandColor, defaultLanguage, brandLogo, brandCss } = look;
    const editable = !fixed(brandName.source) || !fixed(brandColor.source) || !fixed(defaultLanguage.source);
    const nameField = fixed(brandName.source)
      ? shownValue('look-name', t('settings.look.name'), html`<span translate="no">${brandName.value}</span>`, brandName.source)
      : field('brand_name', t('settings.look.name'), {
          value: brandName.value,
          maxlength: 60,
          hint: `${t('settings.look.name_hint')} ${sourceText(brandName.source)}`,
        });
    const colorField = fixed(brandColor.source)
      ? shownValue('look-color', t('settings.look.color'), html`<code>${brandColor.value ?? t('settings.look.color_own')}</code>`, brandColor.source)
      : field('brand_color', t('settings.look.color'), {
          value: brandColor.value ?? '',
          required: false,
          maxlength: 7,
          pattern: '#[0-9A-Fa-f]{6}',
          hint: `${t('settings.look.color_hint')} ${sourceText(brandColor.source)}`,
        });
    const languageField = fixed(defaultLanguage.source)
      ? shownValue('look-language', t('settings.look.language'), html`${t(`language.${defaultLanguage.value}`)}`, defaultLanguage.source)
      : html`<div class="field">
          <label for="f-default_language">${t('settings.look.language')}</label>
          <select id="f-default_language" name="default_language" aria-describedby="f-default_language-hint">
            ${LANGUAGES.map((l) => html`<option value="${l}" lang="${l}" ${defaultLanguage.value === l ? raw('selected') : ''}>${t(`language.${l}`)}</option>`)}
          </select>
          <small id="f-default_language-hint">${t('settings.look.language_hint')} ${sourceText(defaultLanguage.source)}</small>
        </div>`;
    const logo = brandLogo
      ? html`<p id="look-logo">
            <img class="brand-logo" src="/assets/brand-logo?v=${String(Date.now())}" alt="${t('settings.look.logo_alt')}" width="28" height="28" />
            ${t('settings.look.logo_state', { type: brandLogo.type === 'image/png' ? 'PNG' : 'SVG', size: tr().number(Math.ceil(brandLogo.bytes / 1024)) })}
          </p>
          ${sourceNote(brandLogo.source)}`
      : html`<p id="look-logo">${t('settings.look.logo_none')}</p>`;
    const css = brandCss
      ? html`<p id="look-css">${t('settings.look.css_state', { size: tr().number(Math.ceil(brandCss.bytes / 1024)) })}</p>
          ${sourceNote(brandCss.source)}`
      : html`<p id="look-css">${t('settings.look.css_none')}</p>`;
    c.show(
      ctx,
      a,
      'look',
      t('settings.look.title'),
      html`${notice('success', ctx.query.done === 'look_changed' ? t('settings.look.done') : undefined)}
        <p>${t('settings.look.intro')}</p>
        <section id="look-settings">
          <form method="post" action="/admin/look">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${nameField} ${colorField} ${languageField} ${editable ? html`<button type="submit">${t('settings.look.save')}</button>` : ''}
          </form>
        </section>
        <section id="look-files">
          <h2>${t('settings.look.files')}</h2>
          <h3>${t('settings.look.logo')}</h3>
          ${logo}
          <h3>${t('settings.look.css')}</h3>
          ${css}
          <p class="meta">${t('settings.look.files_hint')}</p>
        </section>`,
      o,
    );
  };
  c.get('/admin/look', 'look', lookPage);
  c.post(
    '/admin/look',
    async (_ctx, a, body) => {
      const given = (name: string) => (typeof (body as Record<string, unknown> | null)?.[name] === 'string' ? str(body, name) : undefined);
      try {
        await core.look.change(a.actor, { brandName: given('brand_name'), brandColor: given('brand_color'), defaultLanguage: given('default_language') });
      } catch (err) {
        throw lookRefusal(err);
      }
      return '/admin/look?done=look_changed';
    },
    lookPage,
  );

  const keysPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const keys = await core.keys.list(a.actor);
    c.show(
      ctx,
      a,
      'keys',
      t('settings.keys.title'),
      html`<section>
          ${dataTable(
            [t('settings.keys.kid'), t('settings.keys.alg'), t('settings.keys.state'), t('settings.keys.created'), t('settings.keys.verifies_until')],
            keys.map(
              (k) =>
                html`<tr>
                  <td>${code(k.kid)}</td>
                  <td>${code(k.alg)}</td>
                  <td>${t(`settings.keys.state.${k.state}`)}</td>
                  <td>${tr().dateTime(k.created_at)}</td>
                  <td>${k.verify_until === null ? '-' : tr().dateTime(k.verify_until)}</td>
                </tr>`,
            ),
          )}
        </section>
        <section class="danger">
          <p>${t('settings.keys.rotate_text')}</p>
          <form method="post" action="/admin/keys/rotate">
            <input type="hidden" name="csrf" value="${a.csrf}" />${confirmBox(t('settings.keys.confirm_rotate'))}
            <button type="submit" class="secondary">${t('settings.keys.rotate')}</button>
          </form>
        </section>`,
      o,
    );
  };
  c.get('/admin/keys', 'keys', keysPage);
  c.post(
    '/admin/keys/rotate',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.keys.rotate(a.actor);
      return '/admin/keys?done=key_rotated';
    },
    keysPage,
  );

  const auditPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const q = (k: string) => (typeof ctx.query[k] === 'string' ? (ctx.query[k] as string).trim().slice(0, 254) : '');
    const event = q('event');
    const email = q('email');
    const days = Number(q('days') || '7');
    let rows: Awaited<ReturnType<typeof core.audit.query>> = [];
    let error = o.error;
    if (!/^[a-z_]{0,64}$/.test(event)) error = t('settings.audit.bad_event');
    else if (!Number.isInteger(days) || days < 1 || days > AUDIT_MAX_DAYS) error = t('settings.audit.bad_days', { max: String(AUDIT_MAX_DAYS) });
    else {
      try {
        rows = await core.audit.query(a.actor, {
          limit: AUDIT_LIMIT,
          since: core.clock.now() - days * 86_400_000,
          ...(event ? { event } : {}),
          ...(email ? { accountEmail: email } : {}),
        });
      } catch (err) {
        error = message(err, undefined, { not_found: 'settings.audit.no_account' });
      }
    }
    c.show(
      ctx,
      a,
      'audit',
      t('settings.audit.title'),
      html`<section>
          <form method="get" action="/admin/audit" class="search" role="search">
            ${field('event', t('settings.audit.event'), {
              value: event,
              required: false,
              maxlength: 64,
              hint: t('settings.audit.event_hint', { examples: 'signin_failed, passkey_added, \u2026' }),
            })}
            ${field('email', t('settings.audit.email'), { type: 'email', value: email, required: false })}
            ${field('days', t('settings.audit.days'), { value: String(days), required: false, inputmode: 'numeric', maxlength: 4 })}
            <button type="submit">${t('settings.audit.filter')}</button>
          </form>
        </section>
        <section>
          <p class="meta">${t('settings.audit.newest', { n: tr().number(AUDIT_LIMIT) })}</p>
          ${dataTable(
            [t('settings.audit.when'), t('settings.audit.event'), t('settings.audit.account'), t('settings.audit.from'), t('settings.audit.details')],
            // An event's name, an account and an address break only where they must (.url), so the details do not squeeze them mid-word.
            rows.map(
              (r) =>
                html`<tr>
                  <td class="when">${tr().dateTime(r.created_at)}</td>
                  <td><code class="url">${r.event}</code></td>
                  <td>${r.account ? html`<a href="/admin/accounts/${r.account}" class="url" translate="no">${r.account.slice(0, 8)}</a>` : '-'}</td>
                  <td>${r.client ? html`<code class="url">${r.client}</code>` : '-'}</td>
                  <td>${code(JSON.stringify(r.details))}</td>
                </tr>`,
            ),
          )}
        </section>`,
      { ...o, error },
    );
  };
  c.get('/admin/audit', 'audit', auditPage);
}
