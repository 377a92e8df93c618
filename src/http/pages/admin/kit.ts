/**
 * What the console's pages share: who may see them (administrators only; anyone else, guests
 * included, gets the same 404 as a page that does not exist), the navigation, confirmation of
 * dangerous actions, and fixed messages after a change. Every button calls the core operation the
 * CLI calls, as the signed-in administrator: the audit says `via: "http"`.
 */
import path from 'node:path';
import type { Context } from 'koa';
import { AppError } from '../../../errors';
import type { Actor, Caller } from '../../../core';
import { escape, html, type Html, notice, page, raw } from '../html';
import { type PageKit, refusal, see, send, str } from '../kit';
import { csrfToken, pageCaller } from '../session';

export const SECTIONS = [
  ['accounts', 'Accounts'],
  ['invitations', 'Invitations'],
  ['groups', 'Groups'],
  ['clients', 'OIDC clients'],
  ['saml', 'SAML apps'],
  ['provisioning', 'Provisioning'],
  ['sources', 'Directory sources'],
  ['apps', 'Apps'],
  ['webhooks', 'Webhooks'],
  ['signup', 'Signup'],
  ['look', 'Look'],
  ['keys', 'Keys'],
  ['audit', 'Audit log'],
] as const;
export type Section = (typeof SECTIONS)[number][0];

/**
 * The console's labels for the fields a domain message names (`{--host}` in the message): a
 * refusal on a console form speaks of "Host", not of the shell's --host.
 */
const FORM_LABELS: Readonly<Record<string, string>> = {
  host: 'Host',
  path: 'Path prefixes',
  'bypass-path': 'Open paths',
  name: 'Name',
  'redirect-uri': 'Redirect URIs',
  'post-logout-redirect-uri': 'Post-logout URIs',
  device: 'Device flow',
  credentials: 'Client credentials',
  audience: 'Audience',
  'backchannel-logout-uri': 'Back-channel logout URI',
  'two-factor': 'Two factors',
  metadata: "The app's metadata",
  'entity-id': 'Entity id',
  'acs-url': 'ACS URL',
  nameid: 'NameID',
  public: 'Public client',
  url: 'URL',
  event: 'Events',
  description: 'Description',
  username: 'New username',
  expires: 'The link works for',
  api_key_name: 'Which script is it for?',
};

/** A switch's on or off, as the console's forms send it; anything else is a clear refusal (never "off" by default). */
export function onOff(value: string): boolean {
  if (value !== 'on' && value !== 'off') throw new AppError('invalid_input', 'the switch must be on or off');
  return value === 'on';
}

/**
 * Fixed words after a change (the redirect carries only the name: no reflected text). Read by the
 * query's `done`, so the table has no prototype: `?done=constructor` names no words.
 */
const DONE: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  disabled: 'The account is disabled; its sessions have ended.',
  account_deleted: 'The account is deleted, with its sessions, keys and grants; the apps it signed in to are told.',
  enabled: 'The account is enabled.',
  promoted: 'The account is now an administrator.',
  demoted: 'The account is no longer an administrator.',
  totp_reset: 'Two-factor authentication is off for this account; its sessions have ended.',
  verification: 'A new confirmation link is on its way.',
  session_ended: 'The session is signed out.',
  passkey_removed: 'The passkey is removed.',
  invited: 'The invitation is on its way.',
  invitation_revoked: 'The invitation is withdrawn; its link no longer works.',
  group_created: 'The group is created.',
  group_deleted: 'The group is deleted.',
  member_added: 'The account joined the group.',
  member_removed: 'The account left the group.',
  group_nested: 'The group is inside this one: its members are members here too.',
  group_unnested: 'The group is no longer inside this one.',
  client_removed: 'The client is removed; its tokens are refused.',
  client_changed: 'The client is changed; its next sign-in follows it.',
  scim_token_revoked: 'The SCIM token is revoked: its next request is refused.',
  scim_target_added: 'The push target is added: everyone it should hold is on the way (its queue shows them).',
  scim_target_synced: 'A sync is queued: every person and group it should hold is checked there.',
  scim_target_removed: 'The push target is removed: nothing more is sent (what it holds stays there).',
  saml_added: "The SAML app is added. Give it Gatehouse's metadata URL.",
  saml_removed: 'The SAML app is removed: it can no longer sign anyone in.',
  saml_changed: 'The SAML app is changed; its next sign-in follows it.',
  saml_rotated: 'The next certificate is listed in the metadata; the current one still signs.',
  saml_retired: 'The next certificate signs from now on.',
  app_added: 'The app is added.',
  app_removed: 'The app is removed; its proxy refuses everyone from the next request.',
  signup_opened: 'Guest signup is open.',
  signin_by_mail_on: 'Sign-in by a mailed code is on.',
  signin_by_mail_off: 'Sign-in by a mailed code is off.',
  signup_closed: 'Guest signup is closed.',
  app_password_revoked: 'The app password is revoked.',
  api_key_revoked: 'The API key is revoked.',
  username_changed: 'The username is changed.',
  webhook_removed: 'The webhook is removed; its waiting messages are dropped.',
  key_rotated: 'A new signing key signs from now on; the old one verifies until its tokens expire.',
});

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

/** A dangerous form's confirmation: a box to tick, required by the browser and checked here. */
export const confirmBox = (what: string): Html => html`<label class="check"><input type="checkbox" name="confirm" value="yes" required /> ${what}</label>`;

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
export const managedNote = (file: string): Html => html`<span class="meta managed" title="${file}">Set by ${path.basename(file)}: change it there</span>`;

export const actionButton = (csrf: string, action: string, label: string, o: { confirm?: string; hidden?: Record<string, string>; aria?: string } = {}) =>
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
  if (str(body, 'confirm') !== 'yes') throw new AppError('invalid_input', 'tick the box to confirm; nothing was changed');
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
    const nav = html`<nav class="console" aria-label="Console">
      ${SECTIONS.map(([id, label]) => html`<a href="/admin/${id}" ${id === section ? raw(' aria-current="page"') : ''}>${label}</a>`)}
    </nav>`;
    const done = DONE[String(ctx.query.done)];
    ctx.set('Cache-Control', 'no-store');
    send(ctx, o.status ?? 200, page({ title, signedIn: true, csrf: a.csrf, console: nav }, html`${notice('error', o.error)}${notice('success', done)}${body}`));
  };
  return {
    show,
    async run(ctx, back, handler) {
      const a = await admin(ctx);
      try {
        await handler(a, ctx.request.body);
      } catch (err) {
        await back(ctx, a, refusal(err, FORM_LABELS));
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
          return back(ctx, a, refusal(err, FORM_LABELS));
        }
        see(ctx, to);
      });
    },
  };
}
