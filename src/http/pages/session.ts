/**
 * The pages' own session and CSRF protection. The session cookie holds the access and refresh
 * tokens of a Gatehouse session (HttpOnly, SameSite=Lax, Secure under https); only the pages read
 * it: the JSON APIs take bearer tokens from the Authorization header and nothing else. Form posts
 * carry a CSRF token that must equal the CSRF cookie's (double submit), and a browser's Origin
 * header, when sent, must be this server's.
 */
import { useAccountLanguage } from './look';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { AppError } from '../../errors';
import { isApiKey, type ActionResult, type Caller, type Core } from '../../core';

const NINETY_DAYS_S = 90 * 24 * 60 * 60;

export interface PageCookies {
  session: string;
  csrf: string;
  /** A random id per browser: one that signed in before is not held back by failures elsewhere. */
  device: string;
  secure: boolean;
  /** The session cookie's Domain (--cookie-domain), or null for a host-only cookie. */
  sessionDomain: string | null;
}

/**
 * Under https the cookies take the __Host- prefix: Secure, Path=/, no Domain, by the browser's
 * rule. With --cookie-domain the session cookie is set on that parent domain instead (so every
 * app on its subdomains sees it, for forward authentication) and takes the __Secure- prefix; the
 * CSRF and device cookies stay on Gatehouse's host.
 */
export function cookieNames(publicUrl: string, cookieDomain: string | null = null): PageCookies {
  const secure = publicUrl.startsWith('https:');
  const name = (base: string) => (secure ? `__Host-${base}` : base);
  const session = cookieDomain === null ? name('gatehouse_session') : secure ? '__Secure-gatehouse_session' : 'gatehouse_session';
  return { session, csrf: name('gatehouse_csrf'), device: name('gatehouse_device'), secure, sessionDomain: cookieDomain };
}

export function readCookie(ctx: Context, name: string): string | undefined {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A cookie of the pages (HttpOnly, SameSite=Lax, Secure under https), by name. */
export const setPageCookie = (ctx: Context, names: PageCookies, name: string, value: string, maxAge: number) => setCookie(ctx, names, name, value, maxAge);

function setCookie(ctx: Context, names: PageCookies, name: string, value: string, maxAge: number): void {
  const attributes = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`];
  if (names.secure) attributes.push('Secure');
  if (name === names.session && names.sessionDomain !== null) attributes.push(`Domain=${names.sessionDomain}`);
  ctx.append('Set-Cookie', attributes.join('; '));
}

const FOUR_HUNDRED_DAYS_S = 400 * 24 * 60 * 60;
const RANDOM_ID = /^[A-Za-z0-9_-]{43}$/;

/** Gives this browser a device cookie if it has none (the sign-in page does, before any signin). */
export function ensureDevice(ctx: Context, names: PageCookies): void {
  const existing = readCookie(ctx, names.device);
  if (!existing || !RANDOM_ID.test(existing)) setCookie(ctx, names, names.device, randomBytes(32).toString('base64url'), FOUR_HUNDRED_DAYS_S);
}

/** The CSRF token of this browser (made and set on first sight). */
export function csrfToken(ctx: Context, names: PageCookies): string {
  const existing = readCookie(ctx, names.csrf);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const made = (ctx.state.csrf as string | undefined) ?? randomBytes(32).toString('base64url');
  if (!ctx.state.csrf) setCookie(ctx, names, names.csrf, made, NINETY_DAYS_S);
  ctx.state.csrf = made;
  return made;
}

/**
 * Refuses a form post from another site: the Origin (when sent) and the CSRF token must match.
 * (The pages' Referrer-Policy is same-origin: with no-referrer, browsers send `Origin: null`.)
 */
export function assertSameSite(ctx: Context, names: PageCookies, publicUrl: string, submitted: unknown): void {
  const origin = ctx.get('origin');
  const own = `${ctx.protocol}://${ctx.host}`;
  if (origin && origin !== new URL(publicUrl).origin && origin !== own)
    throw new AppError('forbidden', 'this form was sent from another site', { reason: 'cross_site_form' });
  const cookie = readCookie(ctx, names.csrf);
  const ok =
    typeof submitted === 'string' && cookie !== undefined && submitted.length === cookie.length && timingSafeEqual(Buffer.from(submitted), Buffer.from(cookie));
  if (!ok) throw new AppError('forbidden', 'this form has expired; reload the page and send it again', { reason: 'form_expired' });
}

export interface Tokens {
  token: string;
  refresh: string;
}

export function storeTokens(ctx: Context, names: PageCookies, tokens: Tokens): void {
  setCookie(ctx, names, names.session, `${tokens.token}~${tokens.refresh}`, NINETY_DAYS_S);
}

export function clearTokens(ctx: Context, names: PageCookies): void {
  setCookie(ctx, names, names.session, '', 0);
}

export function tokensOf(ctx: Context, names: PageCookies): Tokens | null {
  const value = readCookie(ctx, names.session);
  const [token, refresh] = (value ?? '').split('~');
  // A page session is an access token and its refresh token; an API key is never one.
  return token && refresh && !isApiKey(token) ? { token, refresh } : null;
}

/** The session an action opened (signin, refresh, password change), as the cookie keeps it. */
export function tokensIn(result: ActionResult): Tokens | null {
  return result.session ? { token: result.session.token, refresh: result.session.refreshToken } : null;
}

const deviceOf = (ctx: Context): string | null => {
  const value = readCookie(ctx, '__Host-gatehouse_device') ?? readCookie(ctx, 'gatehouse_device');
  return value && RANDOM_ID.test(value) ? value : null;
};

export const guestCaller = (ctx: Context): Caller => ({ token: null, client: ctx.ip, userAgent: ctx.get('user-agent') || null, device: deviceOf(ctx) });

/** This browser's request, carrying a page session's access token. */
export const tokenCaller = (ctx: Context, token: string): Caller => ({ ...guestCaller(ctx), token });

/**
 * The signed-in caller of a page, or null: an expired access token is renewed with the refresh
 * token (and the cookie updated); an ended session clears the cookie.
 */
export async function pageCaller(ctx: Context, core: Core, names: PageCookies): Promise<Caller | null> {
  const tokens = tokensOf(ctx, names);
  if (!tokens) return null;
  // A signed-in page speaks the account's chosen language (read once the caller is known).
  const caller = (token: string) => tokenCaller(ctx, token);
  const chosen = async (c: Caller) => {
    useAccountLanguage(await core.accounts.language.mine(c));
    return c;
  };
  try {
    await core.auth.actor(caller(tokens.token));
    return await chosen(caller(tokens.token));
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'invalid_token') throw err;
  }
  try {
    const renewed = tokensIn(await core.actions.run(guestCaller(ctx), 'user_account', 'refresh', { refresh_token: tokens.refresh }));
    if (renewed) {
      storeTokens(ctx, names, renewed);
      return await chosen(caller(renewed.token));
    }
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'invalid_token') throw err;
  }
  clearTokens(ctx, names);
  return null;
}

/**
 * Signing in again on a browser ends the session its cookie held: one browser, one page session.
 * That session may have ended already (401): nothing more to end. Anything else is logged by its
 * code; the new sign-in stands either way.
 */
export async function endPrevious(core: Core, previous: Caller | null): Promise<void> {
  if (!previous) return;
  try {
    await core.actions.run(previous, 'user_account', 'signout', {});
  } catch (err) {
    const code = (err as { code?: string } | null)?.code;
    if (code !== 'unauthenticated' && code !== 'invalid_token') core.logger.warn('previous_session_not_ended', { code: code ?? 'internal' });
  }
}
