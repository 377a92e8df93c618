/**
 * The operator's look as Gatehouse serves it: the logo at one fixed path with the one type its
 * content was checked to be (never a type guessed from a name), the stylesheet as text/css, and
 * the accent colour as a stylesheet of its own (the pages' CSP allows no inline style). All come
 * from Gatehouse's origin, so the pages' `default-src 'self'` holds: a brand stylesheet that
 * loads from elsewhere (url(), @import) is refused by the browser.
 */
import type Router from '@koa/router';
import type { Core } from '../../core';
import { AppError } from '../../errors';

/** An SVG opened on its own is a document: it may run nothing, load nothing, and be framed by nobody. */
const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox";

export function registerBrandAssets(router: Router, core: Core): void {
  // The look may change while the server runs (a configuration file, the console): each asset is
  // read when asked for; the pages link them with the look's version, so a change is fetched anew.
  const none = () => new AppError('not_found', 'no such asset');
  router.get('/assets/brand-logo', async (ctx) => {
    const logo = await core.look.logo();
    if (logo === null) throw none();
    ctx.type = logo.type;
    ctx.set('Content-Security-Policy', LOGO_CSP);
    ctx.set('Content-Disposition', 'inline; filename="logo"');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = logo.body;
  });
  router.get('/assets/brand.css', async (ctx) => {
    const css = await core.look.css();
    if (css === null) throw none();
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = css;
  });
  router.get('/assets/brand-color.css', async (ctx) => {
    const color = (await core.look.current()).color;
    if (color === null) throw none();
    // The colour was checked as #rrggbb before it was kept (flag, file or console): nothing else reaches this text.
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = `:root { --accent: ${color}; --accent-fg: ${readableOn(color)}; }\n@media (prefers-color-scheme: dark) { :root { --accent: ${color}; --accent-fg: ${readableOn(color)}; } }\n`;
  });
}

/** Black or white text on the accent, whichever contrasts more (WCAG relative luminance). */
function readableOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) ? '#000000' : '#ffffff';
}
