/**
 * Pages and mails in the reader's language: one catalogue per language (en.json, de.json,
 * fr.json; English is the reference every other must match key for key), the operator's
 * overrides (--messages) laid over them, and Intl for dates, numbers and durations in the
 * reader's locale. A message is plain text: pages escape it like any other value, so an override
 * holding markup shows as text.
 */
import { AppError } from '../errors';
import { isLanguage, LANGUAGES, type Language, type MessageOverrides } from '../config/languages';
import en from './en.json';
import de from './de.json';
import fr from './fr.json';

export { LANGUAGES, isLanguage, type Language } from '../config/languages';

export type MessageKey = keyof typeof en;
type Catalogue = Readonly<Record<MessageKey, string>>;

export const CATALOGUES: Readonly<Record<Language, Catalogue>> = { en, de, fr };

export interface Translator {
  readonly lang: Language;
  /** Every shipped language is written left to right; the page says so (a catalogue added later may not). */
  readonly dir: 'ltr' | 'rtl';
  /** The message, its {name} places filled (values are text too: the page escapes the whole). */
  t(key: MessageKey, params?: Readonly<Record<string, string | number>>): string;
  /** A time as the reader's locale writes it (date and time to the minute, with the zone: UTC). */
  dateTime(at: Date | number | string): string;
  number(n: number): string;
  /** A duration in seconds as words (1 hour, 15 Minuten, 2 jours). */
  duration(seconds: number): string;
}

export interface Messages {
  /** --default-language, else the look's (a configuration file's or the console's, src/look.ts), else English. */
  readonly defaultLanguage: Language;
  /** The look's default language, as last read from the store (src/look.ts sets it; a flag given keeps its own). */
  useDefaultLanguage(lang: Language): void;
  translator(lang: Language): Translator;
}

function fill(text: string, params?: Readonly<Record<string, string | number>>): string {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

function durationIn(lang: Language, seconds: number): string {
  const [unit, n] =
    seconds % 86400 === 0 && seconds >= 86400
      ? (['day', seconds / 86400] as const)
      : seconds % 3600 === 0 && seconds >= 3600
        ? (['hour', seconds / 3600] as const)
        : seconds % 60 === 0 && seconds >= 60
          ? (['minute', seconds / 60] as const)
          : (['second', seconds] as const);
  return new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'long' }).format(n);
}

/** The catalogues with the operator's overrides; an override of a key no catalogue has is refused at start. */
export function openMessages(defaultLanguage: Language, overrides: MessageOverrides | null): Messages {
  const keys = new Set(Object.keys(en));
  for (const lang of LANGUAGES) {
    const missing = [...keys].filter((k) => !Object.hasOwn(CATALOGUES[lang], k));
    if (missing.length > 0) throw new AppError('internal', `the ${lang} catalogue lacks ${missing.slice(0, 5).join(', ')}`);
  }
  for (const [lang, table] of Object.entries(overrides ?? {})) {
    for (const key of Object.keys(table ?? {})) {
      if (!keys.has(key)) throw new AppError('invalid_input', `{--messages}: ${lang}.${key.slice(0, 80)} is not a message Gatehouse has`);
    }
  }
  const made = new Map<Language, Translator>();
  const translator = (lang: Language): Translator => {
    const known = made.get(lang);
    if (known) return known;
    const table: Record<string, string> = { ...CATALOGUES[lang], ...(overrides?.[lang] ?? {}) };
    const dates = new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
    const numbers = new Intl.NumberFormat(lang);
    const t: Translator = Object.freeze({
      lang,
      dir: 'ltr' as const,
      t: (key: MessageKey, params?: Readonly<Record<string, string | number>>) => fill(table[key] ?? en[key] ?? key, params),
      dateTime: (at: Date | number | string) => `${dates.format(new Date(at))} UTC`,
      number: (n: number) => numbers.format(n),
      duration: (seconds: number) => durationIn(lang, seconds),
    });
    made.set(lang, t);
    return t;
  };
  let current = defaultLanguage;
  return {
    get defaultLanguage() {
      return current;
    },
    useDefaultLanguage(lang: Language) {
      current = lang;
    },
    translator,
  };
}

/** The language to use: the account's choice, else the browser's best match (already negotiated), else the default. */
export function chooseLanguage(accountChoice: unknown, fromBrowser: unknown, defaultLanguage: Language): Language {
  if (isLanguage(accountChoice)) return accountChoice;
  if (isLanguage(fromBrowser)) return fromBrowser;
  return defaultLanguage;
}

/** The language of a mail to an account: its choice on /account, else the server's default. */
export const accountTranslator = (messages: Messages, account: { language: string | null }): Translator =>
  messages.translator(chooseLanguage(account.language, null, messages.defaultLanguage));
