/**
 * The passkey actions for apps with their own screens (contract section 12): options for the
 * browser's navigator.credentials call, then its answer, in the JSON form @simplewebauthn/browser
 * gives. The pages use the same actions.
 */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { beginCeremony, finishRegistration, finishSignin } from '../passkeys/ceremonies';
import type { ChallengePurpose } from '../store/passkeys';
import type { ActionDef } from './types';

const PURPOSES: readonly ChallengePurpose[] = ['signin', 'register', 'signup'];

export const passkeyOptions: ActionDef = {
  onType: 'user_account',
  name: 'passkey_options',
  whileRecovering: true,
  input: { purpose: 'optional', email: 'optional', name: 'optional', password: 'optional', invite: 'optional' },
  async run(ctx) {
    const purpose = stringField(ctx.attributes, 'purpose', false);
    if (purpose !== undefined && !PURPOSES.includes(purpose as ChallengePurpose)) {
      throw new AppError('invalid_input', `purpose must be one of ${PURPOSES.join(', ')}`);
    }
    const options = await beginCeremony(ctx, {
      purpose: purpose as ChallengePurpose | undefined,
      email: stringField(ctx.attributes, 'email', false),
      name: stringField(ctx.attributes, 'name', false),
      password: stringField(ctx.attributes, 'password', false),
      invite: stringField(ctx.attributes, 'invite', false),
    });
    return { passkeyOptions: options };
  },
};

export const passkeyRegister: ActionDef = {
  onType: 'user_account',
  name: 'passkey_register',
  whileRecovering: true,
  input: { response: 'object', name: 'optional' },
  async run(ctx) {
    const done = await finishRegistration(ctx, ctx.attributes.response, stringField(ctx.attributes, 'name', false));
    return {
      session: done.session,
      passkey: done.passkey,
      message: done.created ? 'account created with a passkey; you are signed in' : 'passkey added',
      created: done.created,
    };
  },
};

export const passkeySignin: ActionDef = {
  onType: 'user_account',
  name: 'passkey_signin',
  input: { response: 'object' },
  ignoresToken: true,
  async run(ctx) {
    return { session: await finishSignin(ctx, ctx.attributes.response), message: 'signed in' };
  },
};
