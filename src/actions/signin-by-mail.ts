/**
 * The signin_by_mail action, in two calls: `email` asks for a code (the answer is the same for
 * every address, with a `mail_code_request` to send back), then `request` and `code` (and `otp` or
 * `recovery_code` for an account with TOTP) sign in. Off until the operator opens it to guests
 * (a flag of the server, the console, or `actions: {signin_by_mail: {guest: true}}` in a file).
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { mailCodeSignin, requestMailCode } from '../accounts/mail-signin';
import { sessionOf } from './account-helpers';
import type { ActionDef } from './types';

export const SAME_ANSWER = 'if an account uses this address, a code is on its way: it works for 10 minutes';

export const signinByMail: ActionDef = {
  onType: 'user_account',
  name: 'signin_by_mail',
  input: { email: 'optional', request: 'optional', code: 'optional', otp: 'optional', recovery_code: 'optional' },
  ignoresToken: true,
  async run({ s, actor, attributes }) {
    const email = stringField(attributes, 'email', false);
    const request = stringField(attributes, 'request', false);
    const code = stringField(attributes, 'code', false);
    if (email !== undefined && request === undefined && code === undefined) {
      // The API client's own secret binds the request, as a browser's cookie does on the pages.
      const binding = randomBytes(32).toString('base64url');
      const { handle } = await requestMailCode(s, actor, email, binding);
      return { mailCodeRequest: `${handle}.${binding}`, message: SAME_ANSWER };
    }
    if (request === undefined || code === undefined || email !== undefined)
      throw new AppError('invalid_input', 'send {email} to ask for a code, or {request} and {code} to sign in with it');
    const [handle, binding = null] = request.split('.', 2);
    const { session } = await mailCodeSignin(s, actor, { handle, binding, code }, { check: attributes });
    return { session: sessionOf(session!), message: 'signed in' };
  },
};
