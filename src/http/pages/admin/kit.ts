/**
 * What the console's pages share: who may see them (administrators only; anyone else, guests
 * included, gets the same 404 as a page that does not exist), the navigation, confirmation of
 * dangerous actions, and fixed messages after a change. Every button calls the core operation the
 * CLI calls, as the signed-in administrator: the audit says `via: "http"`.
 */
import path from 'node:path';
import type { Context } from 'koa';
import { AppError } from '../../../errors';
import type { Actor, Caller, MessageKey } from '../../../core';
import { escape, html, type Html, notice, page, raw, tm } from '../html';
import { look, t } from '../look';
import { type PageKit, refusal, see, send, str } from '../kit';
import { csrfToken, pageCaller } from '../session';

export const SECTIONS = [
  ['accounts', 'admin.nav.accounts'],
  ['invitations', 'admin.nav.invitations'],
  ['groups', 'admin.nav.groups'],
  ['clients', 'admin.nav.clients'],
  ['saml', 'admin.nav.saml'],
  ['provisioning', 'admin.nav.provisioning'],
  ['sources', 'admin.nav.sources'],
  ['apps', 'admin.nav.apps'],
  ['webhooks', 'admin.nav.webhooks'],
  ['signup', 'admin.nav.signup'],
  ['look', 'admin.nav.look'],
  ['keys', 'admin.nav.keys'],
  ['audit', 'admin.nav.audit'],
] as const satisfies ReadonlyArray<readonly [string, MessageKey]>;
export type Section = (typeof SECTIONS)[number][0];

/**
 * The console's labels for the fields a domain message names (`{--host}` in the message): a
 * refusal on a console form speaks of "Host", not of the shell's --host. The same messages as the
 * forms' labels, so the refusal names the field the reader sees.
 */
const FORM_LABELS: Readonly<Record<string, MessageKey>> = {
  host: 'admin.apps.host',
  path: 'admin.apps.paths',
  'bypass-path': 'admin.apps.open_paths',
  name: 'admin.name',
  'redirect-uri': 'admin.clients.redirect_uris',
  'post-logout-redirect-uri': 'admin.clients.post_logout_uris',
  device: 'admin.clients.device',
  credentials: 'admin.clients.credentials',
  audience: 'admin.clients.audience',
  'backchannel-logout-uri': 'admin.clients.backchannel',
  'two-factor': 'admin.two_factors',
  metadata: 'admin.saml.metadata',
  'entity-id': 'admin.saml.entity_id',
  'acs-url': 'admin.saml.acs_url',
  nameid: 'admin.saml.nameid',
  public: 'admin.clients.public',
  url: 'admin.webhooks.url',
  event: 'admin.webhooks.events',
  description: 'admin.webhooks.description',
  username: 'admin.account.new_username',
  expires: 'admin.invitations.expires',
  api_key_name: 'admin.account.api_key_name',
};

/** FORM_LABELS in the reader's language. */
const formLabels = (): Record<string, string> => Object.fromEntries(Object.entries(FORM_LABELS).map(([name, key]) => [name, t(key)]));

/** A switch's on or off, as the console's forms send it; anything else is a clear refusal (never "off" by default). */
export function onOff(value: string): boolean {
  if (value !== 'on' && value !== 'off') throw new AppError('invalid_input', t('admin.refused.switch'));
  return value === 'on';
}

/**
 * Fixed words after a change (the redirect carries only the name: no reflected text). Read by the
 * query's `done`, so the table has no prototype: `?done=constructor` names no words.
 */
const DONE: Readonly<Record<string, MessageKey>> = Object.assign(Object.create(null) as Record<string, MessageKey>, {
  disabled: 'admin.done.disabled',
  account_deleted: 'admin.done.account_deleted',
  enabled: 'admin.done.enabled',
  promoted: 'admin.done.promoted',
  demoted: 'admin.done.demoted',
  totp_reset: 'admin.done.totp_reset',
  verification: 'admin.done.verification',
  session_ended: 'admin.done.session_ended',
  passkey_removed: 'admin.done.passkey_removed',
  invited: 'admin.done.invited',
  invitation_revoked: 'admin.done.invitation_revoked',
  group_created: 'admin.done.group_created',
  group_deleted: 'admin.done.group_deleted',
  member_added: 'admin.done.member_added',
  member_removed: 'admin.done.member_removed',
  group_nested: 'admin.done.group_nested',
  group_unnested: 'admin.done.group_unnested',
  client_removed: 'admin.done.client_removed',
  client_changed: 'admin.done.client_changed',
  scim_token_revoked: 'admin.done.scim_token_revoked',
  scim_target_added: 'admin.done.scim_target_added',
  scim_target_synced: 'admin.done.scim_target_synced',
  scim_target_removed: 'admin.done.scim_target_removed',
  saml_added: 'admin.done.saml_added',
  saml_removed: 'admin.done.saml_removed',
  saml_changed: 'admin.done.saml_changed',
  saml_rotated: 'admin.done.saml_rotated',
  saml_retired: 'admin.done.saml_retired',
  app_added: 'admin.done.app_added',
  app_removed: 'admin.done.app_removed',
  signup_opened: 'admin.done.signup_opened',
  signin_by_mail_on: 'admin.done.signin_by_mail_on',
  signin_by_mail_off: 'admin.done.signin_by_mail_off',
  signup_closed: 'admin.done.signup_closed',
  app_password_revoked: 'admin.done.app_password_revoked',
  api_key_revoked: 'admin.done.api_key_revoked',
  username_changed: 'admin.done.username_changed',
  webhook_removed: 'admin.done.webhook_removed',
  key_rotated: 'admin.done.key_rotated',
});

/** A value someone typed or a system named (a name, an address, a group), shown in running text: data, not words. */
export const data = (value: string): Html => html`<span translate="no">${value}</span>`;

/** A time as the reader's locale writes it (with its zone), or "never". */
export const when = (iso: string | null): string => (iso === null ? t('admin.never') : look().tr.dateTime(iso));

/** Yes or no in the reader's language. */
export const yesNo = (b: boolean): string => t(b ? 'admin.yes' : 'admin.no');

/** The messages `<base>.one` and `<base>.other` (a count of people, of groups): the one the reader's language uses for n. */
type Counted = { [K in MessageKey]: K extends `${infer B}.one` ? B : never }[MessageKey];
export const counted = (base: Counted, n: number): string => {
  const form = new Intl.PluralRules(look().tr.lang).select(n) === 'one' ? 'one' : 'other';
  return t(`${base}.${form}` as MessageKey, { n: look().tr.number(n) });
};

export interface Admin {
  caller: Caller;
  actor: Actor;
  csrf: string;
}

export interface ConsoleKit {
  /** A console page: administrators only (404 for everyone else), never cached. */
  get(path: string, section: Section, handler: (ctx: Context, admin: Admin) => Promise<void>): void;
  /** A console form post (CSRF checked): the handler answers a redirect's address; a refusal shows on `back`'s page. */
  post(
    path: string,
    handler: (ctx: Context, admin: Admin, body: unknown) => Promise<string>,
    back: (ctx: Context, admin: Admin, error: { status: number; error: string }) => Promise<void>,
  ): void;
  /** Inside a form post of the page kit's own: the administrator, the handler, a refusal shown on `back`'s page. */
  run(
    ctx: Context,
    back: (ctx: Context, admin: Admin, error: { status: number; error: string }) => Promise<void>,
    handler: (admin: Admin, body: unknown) => Promise<void>,
  ): Promise<void>;
  /** Sends a console page. */
  show(ctx: Context, admin: Admin, section: Section, title: string, body: Html, o?: { status?: number; error?: string }): void;
}

const notFound = () => new AppError('not_found', 'no such page');

/** A dangerous form's confirmation: a box to tick, required by the browser and checked here (its words one flex item: a name inside them keeps its spaces). */
export const confirmBox = (what: string | Html): Html =>
  html`<label class="check"><input type="checkbox" name="confirm" value="yes" required /> <span>${what}</span></label>`;

/** A column of a console table: a heading, shown only on wide screens, or read by screen readers only. */
export type Column = string | { label: string; wide?: boolean; quiet?: boolean };

/**
 * Each cell of the rows (ours, `<tr>` of `<td>`s) names its column in `data-label`: on a phone the
 * rows stack their cells, and the stylesheet shows the label before each value ("Administrator:
 * no"), as the hidden heading row no longer does. Quiet columns (buttons) need none.
 */
function labelCells(columns: readonly Column[], rows: Html | readonly Html[]): Html {
  const labels = columns.map((c) => (typeof c === 'string' ? c : c.quiet ? '' : c.label));
  const text = (Array.isArray(rows) ? rows : [rows]).map((r: Html) => r.html).join('');
  let cell = 0;
  return raw(
    text.replace(/<tr\b|<td(?=[\s>])/g, (tag) => {
      if (tag !== '<td') {
        cell = 0;
        return tag;
      }
      const label = labels[cell++] ?? '';
      return label ? `<td data-label="${escape(label)}"` : tag;
    }),
  );
}

/** The console's tables: headed columns, rows as given; on a phone each row is a block of labelled cells. */
export function dataTable(columns: readonly Column[], rows: Html | readonly Html[]): Html {
  const head = columns.map((c) =>
    typeof c === 'string'
      ? html`<th scope="col">${c}</th>`
      : c.quiet
        ? html`<th scope="col"><span class="meta">${c.label}</span></th>`
        : html`<th scope="col" class="wide-only">${c.label}</th>`,
  );
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          ${head}
        </tr>
      </thead>
      <tbody>
        ${labelCells(columns, rows)}
      </tbody>
    </table>
  </div>`;
}

/** A small form with one button (and the confirmation box for a dangerous one). */
/**
 * In place of the changes a table row offers: an object a configuration file manages is changed
 * there. The file's name only (a path would squeeze the row's other cells); its whole path in the
 * title, and in the refusal a post would get.
 */
export const managedNote = (file: string): Html =>
  html`<span class="meta managed" title="${file}">${tm('admin.managed_note', { file: data(path.basename(file)) })}</span>`;

export const actionButton = (
  csrf: string,
  action: string,
  label: string,
  o: { confirm?: string | Html; hidden?: Record<string, string>; aria?: string } = {},
) =>
  html`<form method="post" action="${action}" class="${o.confirm ? 'danger' : ''}">
    <input
      type="hidden"
      name="csrf"
      value="${csrf}"
    />${Object.entries(o.hidden ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}${o.confirm ? confirmBox(o.confirm) : ''}<button
      type="submit"
      class="secondary"
      ${o.aria ? html` aria-label="${o.aria}"` : ''}
    >
      ${label}
    </button>
  </form>`;

export function assertConfirmed(body: unknown): void {
  if (str(body, 'confirm') !== 'yes') throw new AppError('invalid_input', t('admin.refused.confirm'));
}

export function consoleKit(kit: PageKit): ConsoleKit {
  const { core, router, names, html_, post } = kit;
  /** The signed-in administrator, or the 404 everyone else gets (the console's existence is not told). */
  const admin = async (ctx: Context): Promise<Admin> => {
    ctx.set('Cache-Control', 'no-store');
    const caller = await pageCaller(ctx, core, names);
    if (!caller) throw notFound();
    const actor = await core.auth.actor(caller);
    if (!actor.principal.isAdmin) throw notFound();
    return { caller, actor, csrf: csrfToken(ctx, names) };
  };
  const show: ConsoleKit['show'] = (ctx, a, section, title, body, o = {}) => {
    const nav = html`<nav class="console" aria-label="${t('layout.console')}">
      ${SECTIONS.map(([id, label]) => html`<a href="/admin/${id}" ${id === section ? raw(' aria-current="page"') : ''}>${t(label)}</a>`)}
    </nav>`;
    const done = DONE[String(ctx.query.done)];
    const doneText = done === undefined ? undefined : t(done);
    ctx.set('Cache-Control', 'no-store');
    send(
      ctx,
      o.status ?? 200,
      page({ title, signedIn: true, csrf: a.csrf, console: nav }, html`${notice('error', o.error)}${notice('success', doneText)}${body}`),
    );
  };
  return {
    show,
    async run(ctx, back, handler) {
      const a = await admin(ctx);
      try {
        await handler(a, ctx.request.body);
      } catch (err) {
        await back(ctx, a, refusal(err, formLabels()));
      }
    },
    get(path, _section, handler) {
      router.get(path, html_, async (ctx) => handler(ctx, await admin(ctx)));
    },
    post(path, handler, back) {
      post(path, async (ctx) => {
        const a = await admin(ctx);
        let to: string;
        try {
          to = await handler(ctx, a, ctx.request.body);
        } catch (err) {
          return back(ctx, a, refusal(err, formLabels()));
        }
        see(ctx, to);
      });
    },
  };
}
