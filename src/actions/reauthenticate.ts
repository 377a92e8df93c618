/**
 * user_account/reauthenticate: the person proves again, in the session they are in, that it is
 * them: the password, a TOTP code (or a recovery code), or a passkey assertion. The session's
 * authenticated_at moves to now (a change that adds a way in needs it recent: recent-signin.ts);
 * a code or a passkey (user verified) also makes it a two-factor session. Each proof is checked
 * with the limits, lockouts and failure audit a sign-in has; success is audited `reauthenticated`.
 *
 * Any signed-in session may run it (it grants nothing but a fresher proof), so it checks its own
 * permission: the caller's session, never an API key's request, which has none to confirm.
 */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { callerAccount, confirmPassword } from '../accounts/acting';
import { verifySecondFactor } from '../accounts/second-factor';
import { hasPassword } from '../accounts/ways-in';
import { confirmWithPasskey } from '../passkeys/ceremonies';
import { reauthenticated } from '../store/sessions';
import { type ActionDef, said } from './types';

export const reauthenticate: ActionDef = {
  onType: 'user_account',
  name: 'reauthenticate',
  input: { password: 'optional', otp: 'optional', recovery_code: 'optional', response: 'optional_object' },
  checksOwnPermission: true,
  async run(ctx) {
    const { s, actor, attributes } = ctx;
    const account = await callerAccount(ctx);
    const sessionId = actor.session;
    if (sessionId === null) throw new AppError('forbidden', 'an API key has no session to confirm: sign in instead', { reason: 'api_key_not_a_session' });
    const password = stringField(attributes, 'password', false);
    const code = attributes.otp != null || attributes.recovery_code != null;
    const response = attributes.response;
    let method: 'password' | 'otp' | 'passkey';
    let twoFactor = false;
    if (response != null) {
      if (password !== undefined || code) throw new AppError('invalid_input', 'send a passkey response alone');
      await confirmWithPasskey(ctx, response, account);
      method = 'passkey';
      twoFactor = true;
    } else if (password !== undefined) {
      if (!hasPassword(account)) throw new AppError('invalid_input', 'this account has no password: confirm with a code or a passkey');
      await confirmPassword(ctx, account, password);
      method = 'password';
      // The password and a code together: both factors, as a sign-in with both.
      if (code) {
        await verifySecondFactor(ctx, account);
        twoFactor = true;
      }
    } else if (code) {
      if (!account.totp_enabled) throw new AppError('invalid_input', 'this account has no TOTP: confirm with the password or a passkey');
      await verifySecondFactor(ctx, account);
      method = 'otp';
      twoFactor = true;
    } else {
      throw new AppError('invalid_input', 'send password, otp (or recovery_code), or a passkey response');
    }
    const secondFactor = !twoFactor ? null : method === 'passkey' ? 'hwk' : 'otp';
    if (!(await reauthenticated(s.store.root, sessionId, secondFactor))) throw new AppError('unauthenticated', 'this session has ended; sign in again');
    // As a sign-in's success: the failures this address counted against the account are lifted.
    if (method !== 'otp') await s.limiter.signinSucceeded(account.email_key, actor);
    await s.audit.record('reauthenticated', actor, { account: account.reference_id, session: sessionId, method, two_factor: twoFactor });
    return said(twoFactor ? 'confirmed, with a second factor' : 'confirmed');
  },
};
