import { assertSignupOpen, createAccount, parseNewAccount } from '../accounts/create';
import { findAccountById } from '../store/accounts';
import { sendVerification } from './verification';
import { ActionDef, notify } from './types';

export const signup: ActionDef = {
  onType: 'user_account',
  name: 'signup',
  checksOwnPermission: true,
  async run({ deps, principal, attributes, clientAddress }) {
    await assertSignupOpen(deps, principal);
    await deps.limiter.signupAttempt(clientAddress);
    const input = parseNewAccount(attributes, deps.config.passwordMinLength);
    const account = await createAccount(deps, principal, input);
    deps.counters.signups++;
    await deps.audit.record('signup', { account: account.referenceId });
    if (account.becameAdministrator) await deps.audit.record('bootstrap', { account: account.referenceId, via: 'signup' });
    // At signup only when SMTP is configured; with the outbox, request_verification sends one.
    if (deps.mailer.kind === 'smtp') {
      const row = await findAccountById(deps.store.knex, account.id);
      if (row) sendVerification(deps, row);
    }
    return [
      notify('account created; you can sign in now'),
      {
        ResponseType: 'account.created',
        Attributes: { reference_id: account.referenceId, email: account.email, usergroup_id: account.usergroupReferenceId },
      },
    ];
  },
};
