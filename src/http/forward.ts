/**
 * Forward authentication (contract section 11): reverse proxies ask, for every request to an app
 * behind them, whether it may pass. `GET /auth/forward` takes the original request from Caddy's
 * and Traefik's X-Forwarded-* headers; `GET /auth/request` from nginx's X-Original-URL and
 * X-Original-Method. Both are believed only from --trust-proxy peers. The caller is the pages'
 * session cookie (set on --cookie-domain for apps on subdomains) or a bearer access token.
 *
 * Answers: 200 with every Remote-* header (empty when unknown: Caddy 2.6 would otherwise pass its
 * placeholder text to the app); not signed in → a redirect to /signin?rd=<the original URL> for
 * a browser navigation at /auth/forward (302 for GET/HEAD, 303 otherwise), else 401 (nginx turns
 * it into a redirect with the Location header given here); 403 when signed in but not allowed or
 * when no app covers the host; 400 for a request that cannot be read; 503 when the store is down.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { normalPath, type Core, type ForwardDecision } from '../core';
import { AppError } from '../errors';
import { bearerToken } from './caller';
import { peerTrusted } from './client-address';
import { cookieNames, tokensOf } from './pages/session';
import type { Metrics } from './metrics';

const METHOD = /^[A-Za-z]{1,16}$/;
const MAX_URL = 8192;

/** The original request: its URL as sent (for the way back after sign-in) and the normalized path rules match on. */
type Original = { method: string; url: URL; path: string } | { problem: string; path?: true };

function fromForwarded(ctx: Context): Original {
  const proto = (ctx.get('x-forwarded-proto') || 'http').split(',')[0].trim().toLowerCase();
  const host = ctx.get('x-forwarded-host').split(',')[0].trim();
  const uri = ctx.get('x-forwarded-uri') || '/';
  const method = ctx.get('x-forwarded-method') || 'GET';
  if (proto !== 'http' && proto !== 'https') return { problem: 'X-Forwarded-Proto must be http or https' };
  if (host === '') return { problem: 'X-Forwarded-Host is missing: the proxy must send the original request (see docs/forward-auth.md)' };
  if (!uri.startsWith('/') || uri.length > MAX_URL) return { problem: 'X-Forwarded-Uri must be a path starting with /' };
  return parse(method, `${proto}://${host}${uri}`, uri);
}

function fromOriginal(ctx: Context): Original {
  const raw = ctx.get('x-original-url');
  if (raw === '') return { problem: 'X-Original-URL is missing: the proxy must send the original request (see docs/forward-auth.md)' };
  if (raw.length > MAX_URL) return { problem: 'X-Original-URL is too long' };
  // The path exactly as the client sent it: the URL parser below would resolve some dot segments
  // and leave the rest, so rules are matched on normalPath's reading instead.
  const rawPath = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\\?#]*([^#]*)/.exec(raw)?.[1] || '/';
  return parse(ctx.get('x-original-method') || 'GET', raw, rawPath);
}

function parse(method: string, raw: string, rawPathAndQuery: string): Original {
  if (!METHOD.test(method)) return { problem: 'the original method is not an HTTP method' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'the original request is not a URL' };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '')
    return { problem: 'the original URL must be http(s) without credentials' };
  const normal = normalPath(rawPathAndQuery.split('?')[0]);
  if ('problem' in normal) return { problem: normal.problem, path: true };
  return { method: method.toUpperCase(), url, path: normal.path };
}

/**
 * Why a request was refused, as a short code: in the X-Gatehouse-Reason header (a proxy can show
 * it: docs/forward-auth.md's nginx block sends the browser to /auth/denied with it) and in the
 * request's log line. The body says it in words.
 */
export const REFUSALS = {
  untrusted_proxy: 'forwarded headers are believed only from trusted proxies: name this proxy in the trust-proxy setting (docs/forward-auth.md)',
  bad_request: 'the proxy did not send the original request',
  bad_path: 'this address can be read in more than one way (an encoded /, a .. segment, a ; parameter, a different case), so it is refused',
  no_app: 'no app covers this address',
  not_in_group: 'your account is not in a group this app allows',
  second_factor_required: 'this app requires signing in with two-factor authentication',
  unauthenticated: 'sign in first',
} as const;
export type Refusal = keyof typeof REFUSALS;

function refuse(ctx: Context, status: number, reason: Refusal, words: string = REFUSALS[reason]): void {
  ctx.state.reason = reason;
  ctx.set('X-Gatehouse-Reason', reason);
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = words + '\n';
}

const DENIED: Record<'no_app' | 'not_member' | 'two_factor', Refusal> = {
  no_app: 'no_app',
  not_member: 'not_in_group',
  two_factor: 'second_factor_required',
};

/** A header value as bytes on the wire: UTF-8 (Node refuses characters past Latin-1), no line breaks. */
const headerValue = (v: string) => Buffer.from(v.replace(/[\r\n]/g, ' '), 'utf8').toString('latin1');

/**
 * A path refused because apps read it in more than one way: 400 at
 * /auth/forward (Caddy and Traefik pass it on), 403 at /auth/request, since nginx's auth_request
 * turns anything but 2xx, 401 and 403 into a 500; its documented block then shows /auth/denied.
 */
function badPath(ctx: Context, metrics: Metrics, kind: 'forward' | 'request', problem: string): void {
  metrics.forward('bad_path');
  refuse(ctx, kind === 'request' ? 403 : 400, 'bad_path', `refused: ${problem}`);
}

export function registerForward(router: Router, core: Core, metrics: Metrics): void {
  const names = () => cookieNames(core.config.publicUrl, core.config.cookieDomain);
  const signinUrl = (url: URL) => `${core.config.publicUrl}/signin?rd=${encodeURIComponent(url.toString())}`;

  const handle = (kind: 'forward' | 'request') => async (ctx: Context) => {
    if (!peerTrusted(ctx.req.socket.remoteAddress ?? '', core.config.trustProxy)) {
      metrics.forward('untrusted');
      return refuse(ctx, 403, 'untrusted_proxy');
    }
    const original = kind === 'forward' ? fromForwarded(ctx) : fromOriginal(ctx);
    if ('problem' in original && original.path) return badPath(ctx, metrics, kind, original.problem);
    if ('problem' in original) {
      metrics.forward('bad_request');
      return refuse(ctx, 400, 'bad_request', original.problem);
    }
    const token = bearerToken(ctx.get('authorization')) ?? tokensOf(ctx, names())?.token ?? null;
    let decision: ForwardDecision;
    try {
      decision = await core.apps.forward({ token, client: ctx.ip, userAgent: ctx.get('user-agent') || null }, original);
    } catch (err) {
      // The store being down is the one failure a proxy should see as such; anything the caller sent is a 4xx.
      if (err instanceof AppError && err.code !== 'unavailable') {
        metrics.forward('bad_request');
        return refuse(ctx, 400, 'bad_request', err.message);
      }
      throw err;
    }
    if (decision.outcome === 'bad_path') return badPath(ctx, metrics, kind, decision.problem);
    metrics.forward(decision.outcome === 'denied' ? `denied_${decision.reason}` : decision.outcome);
    if (decision.outcome === 'allowed') {
      const u = decision.user;
      ctx.set('Remote-User', u?.id ?? '');
      ctx.set('Remote-Email', headerValue(u?.email ?? ''));
      ctx.set('Remote-Name', headerValue(u?.name ?? ''));
      ctx.set('Remote-Groups', headerValue(u?.groups.join(',') ?? ''));
      ctx.status = 200;
      ctx.body = '';
      return;
    }
    if (decision.outcome === 'denied') return refuse(ctx, 403, DENIED[decision.reason]);
    // Not signed in: a browser navigation is sent to sign in and brought back (rd); an XHR or an
    // API client gets 401. nginx's auth_request takes only 200, 401 and 403, so /auth/request
    // answers 401 either way and names the sign-in address (Location) only for a browser: the
    // documented block redirects when there is one and keeps the 401 when there is not.
    const browser = /text\/html/i.test(ctx.get('accept'));
    if (kind === 'forward' && browser) {
      ctx.status = ['GET', 'HEAD'].includes(original.method) ? 302 : 303;
      ctx.set('Location', signinUrl(original.url));
      ctx.body = '';
      return;
    }
    if (browser) ctx.set('Location', signinUrl(original.url));
    ctx.set('WWW-Authenticate', 'Bearer');
    refuse(ctx, 401, 'unauthenticated');
  };
  // What the documented nginx block shows a refused browser: the reason in words (plain text, so
  // it reads the same served under the app's own host), and where to change accounts.
  router.get('/auth/denied', (ctx) => {
    const reason = ctx.query.reason;
    const known = typeof reason === 'string' && reason !== 'unauthenticated' && Object.hasOwn(REFUSALS, reason) ? (reason as Refusal) : null;
    const words = known ? REFUSALS[known] : 'Gatehouse refused this request';
    refuse(
      ctx,
      403,
      known ?? 'bad_request',
      `${words.charAt(0).toUpperCase()}${words.slice(1)}.\n\nSigned in with the wrong account? Sign out at ${core.config.publicUrl}/account`,
    );
  });
  router.all('/auth/forward', handle('forward'));
  router.all('/auth/request', handle('request'));
}
