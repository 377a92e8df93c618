/**
 * The signin action: an email, a password and, for an account with TOTP, its code (otp, or
 * recovery_code) in the same request, through the password's way in (accounts/password-signin.ts)
 * and the one sign-in routine.
 */
import { stringField } from '../accounts/validate';
import { passwordSignin } from '../accounts/password-signin';
import { sessionOf } from './account-helpers';
import type { ActionDef } from './types';

export const signin: ActionDef = {
  onType: 'user_account',
  name: 'signin',
  input: { email: 'required', password: 'required', otp: 'optional', recovery_code: 'optional' },
  ignoresToken: true,
  async run(ctx) {
    const { s, actor, attributes } = ctx;
    const input = { email: stringField(attributes, 'email')!, password: stringField(attributes, 'password')! };
    const { session } = await passwordSignin(s, actor, input, { check: attributes });
    return { session: sessionOf(session!), message: 'signed in' };
  },
};
