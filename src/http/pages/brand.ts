/**
 * The operator's look as Gatehouse serves it: the logo at one fixed path with the one type its
 * content was checked to be (never a type guessed from a name), the stylesheet as text/css, and
 * the accent colour as a stylesheet of its own (the pages' CSP allows no inline style). All come
 * from Gatehouse's origin, so the pages' `default-src 'self'` holds: a brand stylesheet that
 * loads from elsewhere (url(), @import) is refused by the browser.
 */
import type Router from '@koa/router';
import type { Core } from '../../core';

/** An SVG opened on its own is a document: it may run nothing, load nothing, and be framed by nobody. */
const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox";

export function registerBrandAssets(router: Router, core: Core): void {
  const { brandLogo, brandCss, brandColor } = core.config;
  if (brandLogo) {
    router.get('/assets/brand-logo', (ctx) => {
      ctx.type = brandLogo.type;
      ctx.set('Content-Security-Policy', LOGO_CSP);
      ctx.set('Content-Disposition', 'inline; filename="logo"');
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = brandLogo.body;
    });
  }
  if (brandCss !== null) {
    router.get('/assets/brand.css', (ctx) => {
      ctx.type = 'text/css; charset=utf-8';
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = brandCss;
    });
  }
  if (brandColor !== null) {
    // The colour was checked as #rrggbb at start: nothing else reaches this text.
    const css = `:root { --accent: ${brandColor}; --accent-fg: ${readableOn(brandColor)}; }\n@media (prefers-color-scheme: dark) { :root { --accent: ${brandColor}; --accent-fg: ${readableOn(brandColor)}; } }\n`;
    router.get('/assets/brand-color.css', (ctx) => {
      ctx.type = 'text/css; charset=utf-8';
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = css;
    });
  }
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
