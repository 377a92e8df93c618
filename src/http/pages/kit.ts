/**
 * What every page file shares: how an HTML answer is sent, how a form post is checked (same
 * site, CSRF) before it runs, how an action's refusal reads on a page, and the kit each page
 * registers its routes with. A page shows the core's answers; it decides no rule.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, isAppError, messageFor } from '../../errors';
import type { ActionResult, Caller, Core } from '../../core';
import { errorStyle, STATUS } from '../errors';
import { lazyKoaBody } from '../body';
import { PAGE_CSP } from './html';
import { t } from './look';
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

/** Refusals whose API message names attributes (passwordConfirm): what a page says instead. */
const PAGE_MESSAGES: Partial<Record<string, string>> = {
  password_mismatch: 'The two passwords differ; type the same one twice.',
  otp_required: 'Enter the code from your authenticator app, or one of your recovery codes.',
};

/**
 * An action's refusal as the page shows it; anything else is not ours to explain. `labels` names
 * the form's fields as the page labels them (the console's forms), for the fields a message names.
 */
export const message = (err: unknown, labels?: Readonly<Record<string, string>>): string => {
  if (!isAppError(err)) throw err;
  const said = messageFor(err, 'text', labels);
  return PAGE_MESSAGES[err.code] ?? said.charAt(0).toUpperCase() + said.slice(1);
};

/** A refusal's status and message, for a form shown again with it. */
export const refusal = (err: unknown, labels?: Readonly<Record<string, string>>): { status: number; error: string } => ({
  error: message(err, labels),
  status: STATUS[(err as AppError).code],
});

/**
 * Fixed success messages by name (redirects carry only the name: no reflected text). Read by the
 * query's `done`, so the table has no prototype: `?done=constructor` names no message.
 */
export const DONE: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  welcome: 'Your account is ready.',
  username: 'Username changed: apps that sign you in by username (LDAP) use the new one from now on.',
  password: 'Password changed. Other sessions are signed out.',
  email: 'Email address changed. Other sessions are signed out; confirm the new address with the link we sent.',
  verification: 'A confirmation link is on its way to your address.',
  totp_off: 'Two-factor authentication is off.',
  revoked: 'The session is signed out.',
  signed_out: 'You are signed out.',
  recovery: 'You are signed in by a recovery link: add a passkey or a password in the next 15 minutes, then sign in with it.',
  everywhere: 'Every session is signed out.',
  others: 'Every other session is signed out; this browser stays signed in.',
  app_revoked: 'The app no longer has access: its tokens are ended and it is told to sign you out.',
  deleted: 'Your account is deleted. Goodbye.',
  reset: 'Your password is changed. Sign in with the new one.',
  passkey_added: 'Passkey added. You can sign in with it from now on.',
  passkey_removed: 'The passkey is removed.',
  password_link: 'A link to set a password is on its way to your address.',
  linked: 'The sign-in is linked: you can use it to sign in from now on.',
  unlinked: 'The sign-in is unlinked.',
  app_password_revoked: 'The app password is revoked: the app it was for can no longer sign in with it.',
  ssh_key_added: 'SSH key added: servers that read the directory take it at their next look-up.',
  ssh_key_removed: 'SSH key removed: servers that read the directory stop taking it at their next look-up.',
  login_shell: 'Login shell changed: servers use it at your next sign-in there.',
  api_key_revoked: 'The API key is revoked: a script using it is refused from its next request.',
});

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
