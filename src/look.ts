/**
 * The operator's look as the pages draw it: the brand name, accent colour, default language,
 * logo and stylesheet. Each comes from the first of: its `gatehouse serve` flag (or environment
 * variable), the store (a configuration file's `look:` or the console's settings page), Gatehouse's
 * own. A flag is the server's own setting and wins: the console shows it and offers no change to
 * it. What a configuration file manages is the file's: the console names the file instead.
 *
 * The pages read the look at most once a second per server (a change on another instance shows
 * within that second; one made here, at once).
 */
import { AppError } from './errors';
import type { Actor } from './actor';
import type { Services } from './services';
import { requireAdministrator } from './access/caller';
import { brandColor, brandName, type BrandLogo } from './config/brand';
import { language, type Language } from './config/languages';
import { readLook, readLookHeads, writeLook, type LookKey } from './store/look';
import { managedNames } from './store/config-managed';
import { inOneTransaction } from './store/handle';
import { lockAccounts } from './store/accounts';

export const DEFAULT_BRAND_NAME = 'Gatehouse';
const READ_EVERY_MS = 1000;

/** What a page is drawn with. `version` changes with every change of the look (asset links carry it). */
export interface LookNow {
  readonly name: string;
  readonly color: string | null;
  readonly defaultLanguage: Language;
  readonly logo: BrandLogo['type'] | null;
  readonly css: boolean;
  readonly version: string;
}

/** Where a setting's value comes from. */
export type LookSource = { by: 'flag'; flag: string } | { by: 'file'; file: string } | { by: 'console' } | { by: 'default' };

/** The console's view: each setting's value and where it comes from. */
export interface LookSettings {
  brandName: { value: string; source: LookSource };
  brandColor: { value: string | null; source: LookSource };
  defaultLanguage: { value: Language; source: LookSource };
  brandLogo: { type: BrandLogo['type']; bytes: number; source: LookSource } | null;
  brandCss: { bytes: number; source: LookSource } | null;
}

/** The console's change: the settings its form holds (those a flag or a file sets are not in it). */
export interface LookChange {
  brandName?: string;
  /** '' for Gatehouse's own colour. */
  brandColor?: string;
  defaultLanguage?: string;
}

export interface LookOperations {
  current(): Promise<LookNow>;
  /** The logo's bytes and type (the flag's, else the store's), or null. */
  logo(): Promise<BrandLogo | null>;
  css(): Promise<string | null>;
  settings(actor: Actor): Promise<LookSettings>;
  /** The console's change of name, colour and default language: each checked as its flag is; one set by a flag or a file is refused. */
  change(actor: Actor, input: LookChange): Promise<{ changed: string[] }>;
}

/** Gatehouse's own value of each setting, where nothing sets one. */
const OWN: Readonly<Record<LookKey, string | null>> = {
  brand_name: DEFAULT_BRAND_NAME,
  brand_color: null,
  default_language: 'en',
  brand_logo: null,
  brand_css: null,
};

/** The flag of `serve` that sets each (its name; shown as --name). */
const FLAGS: Readonly<Record<LookKey, string>> = {
  brand_name: 'brand-name',
  brand_color: 'brand-color',
  default_language: 'default-language',
  brand_logo: 'brand-logo',
  brand_css: 'brand-css',
};

/** A stored logo (`<type>;base64,<bytes>`) as its type and bytes. */
export const storedLogo = (value: string): BrandLogo => {
  const at = value.indexOf(';base64,');
  return Object.freeze({ type: value.slice(0, at) as BrandLogo['type'], body: Buffer.from(value.slice(at + 8), 'base64') });
};
export const logoValue = (logo: BrandLogo): string => `${logo.type};base64,${logo.body.toString('base64')}`;

export function lookOperations(s: Services): LookOperations {
  let cached: { at: number; look: LookNow } | null = null;
  const c = () => s.config;
  const flagged = (key: LookKey): boolean =>
    ({
      brand_name: c().brandName !== null,
      brand_color: c().brandColor !== null,
      default_language: c().defaultLanguage !== null,
      brand_logo: c().brandLogo !== null,
      brand_css: c().brandCss !== null,
    })[key];

  const read = async (): Promise<LookNow> => {
    const rows = await readLookHeads(s.store.root);
    const stored = (key: LookKey) => (flagged(key) ? undefined : rows.get(key));
    const logoHead = stored('brand_logo');
    const look: LookNow = Object.freeze({
      name: c().brandName ?? stored('brand_name') ?? DEFAULT_BRAND_NAME,
      color: c().brandColor ?? stored('brand_color') ?? null,
      defaultLanguage: c().defaultLanguage ?? (stored('default_language') as Language | undefined) ?? 'en',
      logo: c().brandLogo?.type ?? (logoHead === undefined ? null : (logoHead.slice(0, logoHead.indexOf(';')) as BrandLogo['type'])),
      css: c().brandCss !== null || stored('brand_css') !== undefined,
      version: rows.get('version') ?? '0',
    });
    s.messages.useDefaultLanguage(look.defaultLanguage);
    return look;
  };

  const sourceOf = (key: LookKey, managed: ReadonlyMap<string, { file: string }>, has: boolean): LookSource => {
    if (flagged(key)) return { by: 'flag', flag: FLAGS[key] };
    const file = managed.get(key)?.file;
    if (file !== undefined) return { by: 'file', file };
    return has ? { by: 'console' } : { by: 'default' };
  };

  return {
    async current() {
      const now = s.clock.now();
      if (cached === null || now - cached.at >= READ_EVERY_MS || now < cached.at) cached = { at: now, look: await read() };
      return cached.look;
    },
    async logo() {
      if (c().brandLogo !== null) return c().brandLogo;
      const v = await readLook(s.store.root, 'brand_logo');
      return v === null ? null : storedLogo(v);
    },
    async css() {
      if (c().brandCss !== null) return c().brandCss;
      return readLook(s.store.root, 'brand_css');
    },
    async settings(actor) {
      requireAdministrator(actor, 'read the look');
      const managed = await managedNames(s.store.root, 'look');
      const look = await read();
      const rows = await readLookHeads(s.store.root);
      const logo = await this.logo();
      const css = await this.css();
      return {
        brandName: { value: look.name, source: sourceOf('brand_name', managed, rows.has('brand_name')) },
        brandColor: { value: look.color, source: sourceOf('brand_color', managed, rows.has('brand_color')) },
        defaultLanguage: { value: look.defaultLanguage, source: sourceOf('default_language', managed, rows.has('default_language')) },
        brandLogo: logo === null ? null : { type: logo.type, bytes: logo.body.length, source: sourceOf('brand_logo', managed, true) },
        brandCss: css === null ? null : { bytes: Buffer.byteLength(css), source: sourceOf('brand_css', managed, true) },
      };
    },
    async change(actor, input) {
      requireAdministrator(actor, 'change the look');
      // Each checked as its flag is (the same parsers), before anything is written.
      const want: Array<[LookKey, string | null]> = [];
      if (input.brandName !== undefined) want.push(['brand_name', brandName(input.brandName, '{--brand-name}')]);
      if (input.brandColor !== undefined) want.push(['brand_color', input.brandColor.trim() === '' ? null : brandColor(input.brandColor, '{--brand-color}')]);
      if (input.defaultLanguage !== undefined) want.push(['default_language', language(input.defaultLanguage, '{--default-language}')]);
      const changed = await inOneTransaction(s.store.root, async (tx) => {
        await lockAccounts(tx);
        const managed = await managedNames(tx, 'look');
        const out: string[] = [];
        for (const [key, value] of want) {
          // Nothing stored is Gatehouse's own: setting that is no change.
          if (((await readLook(tx, key)) ?? OWN[key]) === (value ?? OWN[key])) continue;
          if (flagged(key)) throw new AppError('conflict', `{--${FLAGS[key]}} is set by a flag given to the server: change it there`);
          const file = managed.get(key)?.file;
          if (file !== undefined) throw new AppError('conflict', `{--${FLAGS[key].slice(2)}} is managed by ${file}: change it there`);
          await writeLook(tx, key, value);
          out.push(key);
        }
        return out;
      });
      cached = null;
      if (changed.length > 0) await s.audit.record('look_changed', actor, { account: null, settings: changed.join(',') });
      return { changed };
    },
  };
}
