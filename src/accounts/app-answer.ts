/**
 * Answering an app: the one rule every protocol applies before it tells an app who signed in, as
 * PocketBase's RecordAuthResponse is the one place every way in ends. OpenID Connect (at an
 * authorization and at every use of its tokens), SAML (at its Response) and forward
 * authentication (at every proxied request) bring the sign-in's level and what the app needs; the
 * rule says whether the app is answered, and if not what happens next. The front ends only show
 * the answer: none of them compares levels.
 *
 * What an app needs: its own two-factor setting (a client's, a service provider's or a proxied
 * app's, as it stands now), or two factors asked by the request itself (OpenID Connect's acr_values
 * or an essential acr claim, SAML's RequestedAuthnContext). The comparison is assurance.ts's
 * fallsShort; the level a sign-in is at, its acrOf.
 */
import type { Services } from '../services';
import { findAccountById, findAccountByReference } from '../store/accounts';
import { fallsShort } from './assurance';
import { hasSecondFactor } from './ways-in';

export interface AppNeeds {
  /** The app's own setting: its sign-ins need two factors. */
  twoFactor: boolean;
  /** The request asks for two factors. */
  asked?: boolean;
}

/** What an app needs, or how to read it: read only for a sign-in that may fall short of it. */
export type Needs = AppNeeds | (() => Promise<AppNeeds>);

/**
 * At an authorization (a person in a browser, signing in to the app now):
 * - `answer`: the sign-in meets what the app needs; the app is answered;
 * - `second_factor`: it falls short, and the account has a second factor (TOTP, a passkey): the
 *   person is asked for it on Gatehouse's page and comes back to the same sign-in, which is then
 *   answered; never answered at the lower level meanwhile;
 * - `no_second_factor`: it falls short, and the account has none: the app is refused (OpenID
 *   Connect's access_denied, SAML's AuthnFailed) and the person is told how to add one.
 */
export type AppAnswer = 'answer' | 'second_factor' | 'no_second_factor';

/** The words an app is refused with when the account has no second factor, and the page's. */
export const noSecondFactorWords = (app: string) => `${app} needs a second factor, and the account has none`;

async function fallsShortOf(acr: string | undefined, needs: Needs): Promise<boolean> {
  // A sign-in at two factors meets anything an app may need: what it needs is read only for one that may not.
  if (!fallsShort(acr, true)) return false;
  const { twoFactor, asked } = typeof needs === 'function' ? await needs() : needs;
  return fallsShort(acr, twoFactor || asked === true);
}

/**
 * The rule at an authorization: the sign-in (its level, its account: by id, or by reference id as
 * protocols name it) against what the app needs.
 */
export async function answerApp(s: Services, signin: { acr: string | undefined; account: number | string }, needs: Needs): Promise<AppAnswer> {
  if (!(await fallsShortOf(signin.acr, needs))) return 'answer';
  const account =
    typeof signin.account === 'number' ? await findAccountById(s.store.root, signin.account) : await findAccountByReference(s.store.root, signin.account);
  return account !== undefined && (await hasSecondFactor(s.store.root, account)) ? 'second_factor' : 'no_second_factor';
}

/**
 * The rule at a use of what an answer gave, where there is nobody to ask (a code exchanged, a
 * refresh token, an access token at userinfo or introspection; a proxied request): whether the app
 * still takes a sign-in at level `acr`. An app switched to two factors since takes no use of a
 * one-factor sign-in; a level not known (a token that recorded none) falls short of two factors.
 */
export async function stillAnswers(acr: string | undefined, needs: Needs): Promise<boolean> {
  return !(await fallsShortOf(acr, needs));
}
