import { assertSignupOpen, createAccount, parseNewAccount } from '../accounts/create';
import { ActionDef, notify } from './types';

export const signup: ActionDef = {
  onType: 'user_account',
  name: 'signup',
  checksOwnPermission: true,
  async run({ deps, principal, attributes }) {
    await assertSignupOpen(deps, principal);
    const input = parseNewAccount(attributes, deps.config.passwordMinLength);
    const account = await createAccount(deps, principal, input);
    deps.counters.signups++;
    deps.logger.info('signup', { account: account.referenceId });
    if (account.becameAdministrator) deps.logger.info('bootstrap', { account: account.referenceId, via: 'signup' });
    return [
      notify('account created; you can sign in now'),
      {
        ResponseType: 'account.created',
        Attributes: { reference_id: account.referenceId, email: account.email, usergroup_id: account.usergroupReferenceId },
      },
    ];
  },
};
