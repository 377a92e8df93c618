/**
 * `look:` the operator's look, as `gatehouse serve`'s brand flags set it: `brand_name`,
 * `brand_color`, `default_language`, and `brand_logo` and `brand_css` as paths to files (beside
 * this file, or under /run/secrets or $CREDENTIALS_DIRECTORY, like every file a configuration
 * names). Each is checked by the parser of its flag (config/brand.ts, config/languages.ts): one
 * rule, whoever gives the value. A flag given to the server wins over the file (src/look.ts).
 * A setting the file stops naming is removed again when the file set it, let go when it only took
 * over the console's.
 */
import { brandColor, brandName, checkedCss, checkedLogo, LOGO_MAX_BYTES } from '../../config/brand';
import { language, LANGUAGES } from '../../config/languages';
import { LOOK_KEYS, readLook, writeLook, type LookKey } from '../../store/look';
import { managedNames, markManaged } from '../../store/config-managed';
import { logoValue, storedLogo } from '../../look';
import { atKey } from './common';
import { dropUnnamed, noResult, noteTakeOver, type ConfigKind } from '../kind';

type ConfigLook = Partial<Record<LookKey, string>>;

const path = { type: 'string', minLength: 1, maxLength: 4096 } as const;
/** A file is read to this size at most; its own check (checkedLogo, checkedCss) says how large it may be. */
const READ_AT_MOST = 4 * LOGO_MAX_BYTES;

/** A stored value as the plan shows it. */
function shown(key: LookKey, value: string, from?: string): string {
  if (key === 'brand_logo') {
    const logo = storedLogo(value);
    return `${logo.type}, ${logo.body.length} bytes${from ? ` from ${from}` : ''}`;
  }
  if (key === 'brand_css') return `${Buffer.byteLength(value)} bytes${from ? ` from ${from}` : ''}`;
  return JSON.stringify(value);
}

export const lookKind: ConfigKind = {
  key: 'look',
  schema: {
    description: "The look of the pages, as gatehouse serve's --brand-* and --default-language flags set it (a flag given to the server wins).",
    type: 'object',
    additionalProperties: false,
    properties: {
      brand_name: { type: 'string', description: 'The product name in the page header and the window title (1 to 60 characters).' },
      brand_color: { type: 'string', description: 'The accent colour of buttons, links and focus rings, as #RRGGBB.' },
      default_language: {
        type: 'string',
        enum: [...LANGUAGES],
        description: "The pages' and mails' language when neither the reader nor their account names one.",
      },
      brand_logo: { ...path, description: 'A PNG or SVG file of at most 256 KiB (beside this file), served at /assets/brand-logo.' },
      brand_css: { ...path, description: 'A stylesheet of at most 64 KiB (beside this file), served at /assets/brand.css.' },
    },
  },

  async reconcile({ tx, parsed, file, referencedBytes }) {
    const result = noResult();
    const want = (parsed.doc.look as ConfigLook | undefined) ?? {};
    const managed = await managedNames(tx, 'look');
    const stored = new Map<LookKey, string>();
    for (const key of LOOK_KEYS) {
      const v = await readLook(tx, key);
      if (v !== null) stored.set(key, v);
    }
    const named = new Set<string>();
    const changed: string[] = [];
    for (const key of LOOK_KEYS) {
      const raw = want[key];
      if (raw === undefined) continue;
      named.add(key);
      const at = ['look', key];
      let value: string;
      try {
        const where = `look.${key}`;
        if (key === 'brand_logo') value = logoValue(checkedLogo(await referencedBytes(at, READ_AT_MOST, 'logo'), where, raw));
        else if (key === 'brand_css') value = checkedCss(await referencedBytes(at, READ_AT_MOST, 'stylesheet'), where, raw);
        else if (key === 'brand_name') value = brandName(raw, where);
        else if (key === 'brand_color') value = brandColor(raw, where);
        else value = language(raw, where);
      } catch (err) {
        atKey(parsed, at, `look.${key}`, err);
      }
      const now = stored.get(key) ?? null;
      const file_ = key === 'brand_logo' || key === 'brand_css' ? raw : undefined;
      if (now !== value) {
        await writeLook(tx, key, value);
        changed.push(key);
        result.changes.push({ sign: now === null ? '+' : '~', kind: 'look', name: key, detail: shown(key, value, file_) });
      } else {
        noteTakeOver(result, managed, key, file, 'look', key);
      }
      // Taken over when the store held it before (the console's): then only let go, never removed.
      await markManaged(tx, 'look', key, file, now === null || managed.get(key)?.made === true, file_ === undefined ? null : { file: file_ });
    }
    result.changes.push(
      ...(await dropUnnamed(tx, result, file, {
        kind: 'look',
        managed,
        named,
        remove: {
          stored,
          drop: async (_v, key) => {
            await writeLook(tx, key as LookKey, null);
            changed.push(key);
          },
        },
        kept: 'no longer managed (kept as it is)',
      })),
    );
    if (changed.length > 0) {
      result.audits.push((s, actor) => s.audit.record('look_changed', actor, { account: null, settings: changed.join(',') }));
    }
    return result;
  },

  async export(s) {
    const managed = await managedNames(s.store.root, 'look');
    const out: ConfigLook = {};
    for (const key of LOOK_KEYS) {
      const v = await readLook(s.store.root, key);
      if (v === null) continue;
      if (key === 'brand_logo' || key === 'brand_css') {
        // The path the file that set it gave (a logo or stylesheet is only ever set by a file).
        const ref = managed.get(key)?.refs as { file?: string } | null | undefined;
        out[key] = ref?.file ?? (key === 'brand_css' ? 'brand.css' : storedLogo(v).type === 'image/png' ? 'brand-logo.png' : 'brand-logo.svg');
      } else {
        out[key] = v;
      }
    }
    return Object.keys(out).length === 0 ? undefined : out;
  },
};
