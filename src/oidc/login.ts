/**
 * An OpenID Connect login, as the core answers it: the client's gate (its allowed groups) and the
 * rule of answering an app (accounts/app-answer.ts) for the page session the sign-in stands on.
 * The provider's login check and the interaction page ask here; neither compares levels.
 */
import type { Services } from '../services';
import { asksForMfa } from '../accounts/assurance';
import { answerApp, noSecondFactorWords, stillAnswers } from '../accounts/app-answer';
import { clientPolicy, type PageSession } from './support';

/** What an authorization request asks of the sign-in: its acr_values and claims parameter, as sent (JSON text) or parsed. */
export interface LoginAsks {
  acrValues: unknown;
  claims: unknown;
}

/** How the login of an authorization is answered: the login to give the provider, or why not. */
export type LoginAnswer =
  | { kind: 'answer'; login: { accountId: string; ts: number; amr: string[]; acr: string } }
  /** The account is outside the client's allowed groups. */
  | { kind: 'not_allowed' }
  /** The person is asked for their second factor, then comes back to the same interaction. */
  | { kind: 'second_factor' }
  /** The account has no second factor: the page says how to add one, and the client is refused (unmetAnswer). */
  | { kind: 'no_second_factor'; client: string };

/** What the client needs of a sign-in, as it stands now, and what the request asks. */
const needsOf = (s: Services, clientId: string, asks: LoginAsks) => async () => ({
  twoFactor: (await clientPolicy(s, clientId, null)).twoFactor,
  asked: asksForMfa(asks.acrValues, asks.claims),
});

/**
 * The provider's login check: whether its session (at level `acr`) may be answered for the client
 * without the interaction (false: the interaction runs, and answerLogin says what it does).
 */
export const loginMeets = (s: Services, clientId: string, acr: string | undefined, asks: LoginAsks): Promise<boolean> =>
  stillAnswers(acr, needsOf(s, clientId, asks));

/** The interaction's login for a page session: the gate, then the rule of answering an app. */
export async function answerLogin(s: Services, clientId: string, session: PageSession, asks: LoginAsks): Promise<LoginAnswer> {
  const policy = await clientPolicy(s, clientId, session.sub);
  if (!policy.allowed) return { kind: 'not_allowed' };
  const answer = await answerApp(
    s,
    { acr: session.acr, account: session.sub },
    { twoFactor: policy.twoFactor, asked: asksForMfa(asks.acrValues, asks.claims) },
  );
  if (answer === 'second_factor') return { kind: 'second_factor' };
  if (answer === 'no_second_factor') return { kind: 'no_second_factor', client: policy.name };
  // The real time of the sign-in, for auth_time and later max_age checks (not "now").
  return { kind: 'answer', login: { accountId: session.sub, ts: session.authTime, amr: session.amr, acr: session.acr } };
}

/**
 * The client's refusal after the person read that their account has no second factor:
 * unmet_authentication_requirements when the request itself asked for two factors, else
 * access_denied.
 */
export const unmetAnswer = (asks: LoginAsks): { error: string; error_description: string } => ({
  error: asksForMfa(asks.acrValues, asks.claims) ? 'unmet_authentication_requirements' : 'access_denied',
  error_description: noSecondFactorWords('this application'),
});
