/**
 * What every page of one request is drawn with: the reader's language (the account's choice,
 * else Accept-Language by its q-values, else the default language) and the operator's look (name,
 * logo, colour, stylesheet: core.look, read at most once a second). Set once per request by lookMiddleware and read by the layout and
 * the pages, so a page function needs no extra argument to speak the reader's language. AsyncLocalStorage
 * carries it through the request's awaits (one store per request, nothing shared between them).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, Next } from 'koa';
import { chooseLanguage, LANGUAGES, type Core, type Language, type MessageKey, type Translator } from '../../core';

export interface Look {
  /** The translator of the reader's language; replaced when a signed-in page reads the account's choice. */
  tr: Translator;
  /** The language the browser asked for (negotiated), kept for when the account has no choice. */
  readonly browser: Language | null;
  readonly brandName: string;
  readonly logo: boolean;
  readonly css: boolean;
  readonly color: string | null;
  /** Changes with every change of the look: the asset links carry it, so a browser fetches the new ones. */
  readonly version: string;
  readonly core: Core;
}

const current = new AsyncLocalStorage<Look>();

export function look(): Look {
  const l = current.getStore();
  // Every request passes lookMiddleware (the app's first): a page drawn outside one is a bug.
  if (!l) throw new Error('no page look: a page drawn outside a request');
  return l;
}

/** The message in the reader's language (plain text: the templates escape it). */
export const t = (key: MessageKey, params?: Readonly<Record<string, string | number>>): string => look().tr.t(key, params);

/** Too many tries, and when to try again where the limit says so (an error page's and a form's words). */
export const rateLimited = (err: { retryAfter?: number }): string =>
  err.retryAfter ? t('error.rate_limited_for', { duration: look().tr.duration(Math.max(1, Math.ceil(err.retryAfter))) }) : t('error.rate_limited');

/** The best shipped language for an Accept-Language header, by its q-values (Koa's negotiator), or null. */
export function browserLanguage(ctx: Context): Language | null {
  // `*` (what fetch() sends unless told) names no language: the default one answers it.
  const header = ctx.get('accept-language').trim();
  if (header === '' || header === '*') return null;
  const best = ctx.acceptsLanguages([...LANGUAGES]);
  return typeof best === 'string' ? (best as Language) : null;
}

/** The account's stored choice, once a page knows who is signed in. */
export function useAccountLanguage(choice: string | null): void {
  const l = current.getStore();
  if (!l) return;
  l.tr = l.core.messages.translator(chooseLanguage(choice, l.browser, l.core.messages.defaultLanguage));
}

export function lookMiddleware(core: Core) {
  const base = async (browser: Language | null): Promise<Look> => {
    const now = await core.look.current();
    return {
      tr: core.messages.translator(chooseLanguage(null, browser, now.defaultLanguage)),
      browser,
      brandName: now.name,
      logo: now.logo !== null,
      css: now.css,
      color: now.color,
      version: now.version,
      core,
    };
  };
  return async (ctx: Context, next: Next) => current.run(await base(browserLanguage(ctx)), next);
}
