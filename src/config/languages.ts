/**
 * The languages Gatehouse ships (one message catalogue each, src/i18n/) and the operator's own
 * wording from a file. The file's shape is checked here, at start; its keys are checked against
 * the catalogues when the core opens (a misspelt key is refused, never ignored).
 */
import fs from 'node:fs';
import YAML from 'yaml';
import { AppError } from '../errors';

export const LANGUAGES = ['en', 'de', 'fr'] as const;
export type Language = (typeof LANGUAGES)[number];
export const isLanguage = (v: unknown): v is Language => typeof v === 'string' && (LANGUAGES as readonly string[]).includes(v);

/** For each language, message key → the operator's text (plain text: escaped like every message). */
export type MessageOverrides = Readonly<Partial<Record<Language, Readonly<Record<string, string>>>>>;

export const MESSAGES_MAX_BYTES = 256 * 1024;

export const language = (raw: string, name: string): Language => {
  const v = raw.trim().toLowerCase();
  if (!isLanguage(v)) throw new AppError('invalid_input', `${name} must be one of ${LANGUAGES.join(', ')}, got "${v.slice(0, 20)}"`);
  return v;
};

export const messagesFile = (raw: string, name: string): MessageOverrides => {
  const file = raw.trim();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new AppError('invalid_input', `${name}: cannot read ${file.slice(0, 200)}`);
  }
  if (Buffer.byteLength(text) > MESSAGES_MAX_BYTES)
    throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} is larger than ${MESSAGES_MAX_BYTES} bytes`);
  let doc: unknown;
  try {
    // YAML is a superset of JSON: one parser reads both.
    doc = YAML.parse(text, { maxAliasCount: 0 });
  } catch {
    throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} is neither JSON nor YAML`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} must map languages (${LANGUAGES.join(', ')}) to messages`);
  }
  const out: Partial<Record<Language, Record<string, string>>> = {};
  for (const [lang, messages] of Object.entries(doc)) {
    if (!isLanguage(lang)) throw new AppError('invalid_input', `${name}: "${lang.slice(0, 20)}" is not a language Gatehouse has (${LANGUAGES.join(', ')})`);
    if (typeof messages !== 'object' || messages === null || Array.isArray(messages)) {
      throw new AppError('invalid_input', `${name}: ${lang} must map message keys to text`);
    }
    const table: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [key, value] of Object.entries(messages as Record<string, unknown>)) {
      if (typeof value !== 'string') throw new AppError('invalid_input', `${name}: ${lang}.${key.slice(0, 80)} must be text`);
      table[key] = value;
    }
    out[lang] = Object.freeze(table);
  }
  return Object.freeze(out);
};
