/**
 * What every page file shares: how an HTML answer is sent, how a form post is checked (same
 * site, CSRF) before it runs, how an action's refusal reads on a page, and the kit each page
 * registers its routes with. A page shows the core's answers; it decides no rule.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, type ErrorCode, isAppError, messageFor, type Reason } from '../../errors';
import type { ActionResult, Caller, Core, MessageKey } from '../../core';
import { errorStyle, STATUS } from '../errors';
import { lazyKoaBody } from '../body';
import { html, type Html, PAGE_CSP } from './html';
import { rateLimited, t } from './look';
import { assertSameSite, cookieNames, type PageCookies } from './session';

export function send(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = body;
}

export const see = (ctx: Context, location: string) => {
  ctx.status = 303;
  ctx.redirect(location);
};

export const str = (body: unknown, key: string): string => {
  const v = (body as Record<string, unknown> | undefined)?.[key];
  return typeof v === 'string' ? v : '';
};

/**
 * What a page says for the refusals it knows, by reason (a `forbidden`'s rule) or else by code: its
 * own catalogue message, in the reader's language.
 */
export type KnownRefusals = Partial<Readonly<Record<ErrorCode | Reason, MessageKey>>>;

/**
 * Refusals every page words the same (the API's message names attributes, passwordConfirm, or
 * speaks of otp): what a page says instead.
 */
const PAGE_MESSAGES: KnownRefusals = {
  password_mismatch: 'pages.refused.password_mismatch',
  otp_required: 'pages.refused.otp_required',
  otp_invalid: 'pages.refused.otp_invalid',
  rate_limited: 'error.rate_limited',
  body_too_large: 'pages.refused.body_too_large',
  password_too_short: 'pages.refused.password_too_short',
  password_too_long: 'pages.refused.password_too_long',
  password_too_common: 'pages.refused.password_too_common',
  email_unverified: 'pages.refused.email_unverified',
  account_disabled: 'pages.refused.account_disabled',
  signup_closed: 'pages.refused.signup_closed',
};

/** The number a refusal's own words carry (a password's least length), for the page's message. */
const numberIn = (err: AppError): Record<string, string> => ({ n: /\d+/.exec(err.message)?.[0] ?? '' });

/**
 * An action's refusal as the page shows it; anything else is not ours to explain. A refusal the
 * page knows (`known`, its `params` filling the message's places, then the table above) is said
 * in the reader's language; any other in the core's words. `labels` names the form's fields as the page labels them (the console's forms),
 * for the fields a message names.
 */
export const message = (
  err: unknown,
  labels?: Readonly<Record<string, string>>,
  known: KnownRefusals = {},
  params?: Readonly<Record<string, string>>,
): string => {
  if (!isAppError(err)) throw err;
  if (err.code === 'rate_limited' && !known.rate_limited) return rateLimited(err);
  const key = (err.reason && known[err.reason]) || known[err.code] || (err.reason && PAGE_MESSAGES[err.reason]) || PAGE_MESSAGES[err.code];
  if (key) return t(key, params ?? numberIn(err));
  const said = messageFor(err, 'text', labels);
  return said.charAt(0).toUpperCase() + said.slice(1);
};

/** A refusal's status and message, for a form shown again with it. */
export const refusal = (
  err: unknown,
  labels?: Readonly<Record<string, string>>,
  known?: KnownRefusals,
  params?: Readonly<Record<string, string>>,
): { status: number; error: string } => ({
  error: message(err, labels, known, params),
  status: STATUS[(err as AppError).code],
});

/** Fixed success messages by name: redirects carry only the name (no reflected text). */
const DONE_MESSAGES = {
  welcome: 'pages.done.welcome',
  username: 'pages.done.username',
  password: 'pages.done.password',
  email: 'pages.done.email',
  verification: 'pages.done.verification',
  totp_off: 'pages.done.totp_off',
  revoked: 'pages.done.revoked',
  signed_out: 'pages.done.signed_out',
  recovery: 'pages.done.recovery',
  everywhere: 'pages.done.everywhere',
  others: 'pages.done.others',
  app_revoked: 'pages.done.app_revoked',
  deleted: 'pages.done.deleted',
  reset: 'pages.done.reset',
  passkey_added: 'pages.done.passkey_added',
  passkey_removed: 'pages.done.passkey_removed',
  password_link: 'pages.done.password_link',
  linked: 'pages.done.linked',
  unlinked: 'pages.done.unlinked',
  app_password_revoked: 'pages.done.app_password_revoked',
  ssh_key_added: 'pages.done.ssh_key_added',
  ssh_key_removed: 'pages.done.ssh_key_removed',
  login_shell: 'pages.done.login_shell',
  api_key_revoked: 'pages.done.api_key_revoked',
} as const satisfies Record<string, MessageKey>;

/**
 * The success messages by name, each read in the reader's language when a page reads it. Read by
 * the query's `done`, so the table has no prototype: `?done=constructor` names no message.
 */
export const DONE: Readonly<Record<string, string>> = Object.defineProperties(
  Object.create(null) as Record<string, string>,
  Object.fromEntries(Object.entries(DONE_MESSAGES).map(([name, key]) => [name, { get: () => t(key), enumerable: true }])),
);

/** A name someone typed (an app's, a provider's), shown in running text: data, not the page's words. */
export const named = (name: string): Html => html`<span translate="no">${name}</span>`;

/** The sign-in form as other pages show it (the OIDC login, signup's "account created"). */
export type SigninPage = (
  ctx: Context,
  o?: { status?: number; error?: string; info?: string; email?: string; returnTo?: string; rd?: string | null },
) => Promise<void>;

export interface PageKit {
  readonly core: Core;
  readonly router: Router;
  readonly names: PageCookies;
  /** The rule as the server applies it (--password-min-length), not a copy of its default. */
  passwordHint(): string;
  /** Runs a user_account action for the caller, as the API would. */
  run(caller: Caller, name: string, attributes: Record<string, unknown>): Promise<ActionResult>;
  /** Errors of this route answer as a page. */
  readonly html_: ReturnType<typeof errorStyle>;
  /** A form post: same site and CSRF token checked before anything runs. */
  post(path: string, handler: (ctx: Context) => Promise<void>): void;
  /** The same, for a page script's fetch: its refusals answer as an action's JSON error items. */
  postJson(path: string, handler: (ctx: Context) => Promise<void>): void;
}

export function pageKit(core: Core, router: Router): PageKit {
  const names = cookieNames(core.config.publicUrl, core.config.cookieDomain);
  const parseForm = lazyKoaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: '16kb' });
  const html_ = errorStyle('html');
  const json_ = errorStyle('action');
  return {
    core,
    router,
    names,
    passwordHint: () => t('password.hint', { min: core.config.passwordMinLength }),
    run: (caller, name, attributes) => core.actions.run(caller, 'user_account', name, attributes),
    html_,
    post(path, handler) {
      router.post(path, html_, parseForm, async (ctx) => {
        assertSameSite(ctx, names, core.config.publicUrl, str(ctx.request.body, 'csrf'));
        await handler(ctx);
      });
    },
    postJson(path, handler) {
      router.post(path, json_, parseForm, async (ctx) => {
        assertSameSite(ctx, names, core.config.publicUrl, str(ctx.request.body, 'csrf'));
        ctx.set('Cache-Control', 'no-store');
        await handler(ctx);
      });
    },
  };
}
