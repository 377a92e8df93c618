/** Guest (or administrator) signup: the one account-creation use case, plus the verification mail. */
import { createAccount, parseNewAccount } from '../accounts/create';
import { assertSignupOpen } from '../accounts/make';
import { findAccountById } from '../store/accounts';
import { stringField } from '../accounts/validate';
import { acceptWithPassword } from '../invitations/accept';
import { sendVerification } from '../accounts/mailed-links';
import type { ActionDef } from './types';

export const signup: ActionDef = {
  onType: 'user_account',
  name: 'signup',
  // email is required without an invitation (parseNewAccount says so); with one, it is the invitation's.
  input: { email: 'optional', name: 'required', password: 'required', passwordConfirm: 'required', username: 'optional', invite: 'optional' },
  checksOwnPermission: true,
  async run({ s, actor, attributes }) {
    const token = stringField(attributes, 'invite', false);
    if (token !== undefined) {
      // An invitation opens signup for its one address, while guest signup stays closed.
      const created = await acceptWithPassword(s, actor, token, {
        name: stringField(attributes, 'name')!,
        password: stringField(attributes, 'password')!,
        passwordConfirm: stringField(attributes, 'passwordConfirm')!,
        username: stringField(attributes, 'username', false),
      });
      return {
        message: 'account created from the invitation; you can sign in now',
        created: { referenceId: created.referenceId, email: created.email, usergroupId: created.usergroupReferenceId },
      };
    }
    // Cheap refusals first: a closed signup or a busy address costs no validation or hashing.
    await assertSignupOpen(s.store.root, actor.principal);
    await s.limiter.signupAttempt(actor);
    const account = await createAccount(s, actor, parseNewAccount(attributes, s.config.passwordMinLength));
    // At signup only when SMTP is configured; with the outbox, request_verification sends one.
    if (s.mailer.kind === 'smtp') {
      const row = await findAccountById(s.store.root, account.id);
      if (row) sendVerification(s, row);
    }
    return {
      message: 'account created; you can sign in now',
      created: { referenceId: account.referenceId, email: account.email, usergroupId: account.usergroupReferenceId },
    };
  },
};
