/**
 * The language a person chooses for their pages and mails, kept with the account: one of the
 * shipped catalogues, or none (then the browser's Accept-Language, then --default-language).
 */
import { AppError } from '../errors';
import type { Caller } from '../actor';
import type { Services } from '../services';
import { setAccountLanguage } from '../store/accounts';
import { isLanguage, LANGUAGES } from '../i18n';
import { ownAccount } from './acting';

export interface LanguageOperations {
  /** The caller's chosen language, or null (as the browser asks). */
  mine(caller: Caller): Promise<string | null>;
  /** Sets it (null or '' clears it): whether it changed. */
  setMine(caller: Caller, language: string | null): Promise<{ language: string | null; changed: boolean }>;
}

export function languageOperations(s: Services): LanguageOperations {
  return {
    mine: async (caller) => {
      const chosen = (await ownAccount(s, caller, { change: false })).account.language;
      return isLanguage(chosen) ? chosen : null;
    },
    async setMine(caller, raw) {
      const language = raw === null || raw === '' ? null : raw;
      if (language !== null && !isLanguage(language)) throw new AppError('invalid_input', `{--language} must be one of ${LANGUAGES.join(', ')}, or empty`);
      const { actor, account } = await ownAccount(s, caller, { change: true });
      const changed = await setAccountLanguage(s.store.root, account.id, language);
      if (changed) await s.audit.record('language_changed', actor, { account: account.reference_id, language: language ?? 'browser' });
      return { language, changed };
    },
  };
}
