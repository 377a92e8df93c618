/**
 * Where "Confirm it is you" (/signin/confirm, confirm.ts) may send a person back to, and its
 * address for a page that met reauthentication_required: kept apart from the page so the forms
 * that link to it (passkeys, API keys, app passwords) need not import the page.
 */
import { isAppError } from '../../errors';
import { INTERACTION_PATH } from '../oidc';

/** The account page and the console's pages, with a section to scroll to: local paths only. */
const ACCOUNT_PATH = /^\/(account|admin(\/[A-Za-z0-9_-]{1,64}){0,3})(#[a-z0-9-]{1,40})?$/;

/** Where the page may go back to: the account pages or a sign-in in progress; anything else is the account page. */
export const confirmReturn = (raw: unknown): string => (typeof raw === 'string' && (ACCOUNT_PATH.test(raw) || INTERACTION_PATH.test(raw)) ? raw : '/account');

/** The page's address, for a page that met reauthentication_required (and for step-up). */
export const confirmAddress = (back: string, secondFactor = false): string =>
  `/signin/confirm?return=${encodeURIComponent(confirmReturn(back))}${secondFactor ? '&need=second-factor' : ''}`;

/** Whether a refusal asks the person to confirm it is them (the page to send them to). */
export const needsConfirming = (err: unknown): boolean => isAppError(err) && err.code === 'reauthentication_required';
