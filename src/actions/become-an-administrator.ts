/** Kept for clients written for the original system: only ever makes the first administrator. */
import { AppError } from '../errors';
import { claimFirstAdministrator } from '../accounts/bootstrap';
import { isAdministrator, lockAccounts } from '../store/accounts';
import { ActionDef, notify } from './types';

export const becomeAnAdministrator: ActionDef = {
  onType: 'world',
  name: 'become_an_administrator',
  async run({ deps, principal }) {
    const accountId = principal.accountId;
    if (accountId === null) throw new AppError('unauthenticated', 'sign in first');
    const outcome = await deps.store.transaction(async (trx) => {
      await lockAccounts(trx);
      if (await isAdministrator(trx, accountId)) return 'already';
      return (await claimFirstAdministrator(trx, accountId)) ? 'became' : 'refused';
    });
    if (outcome === 'refused') throw new AppError('forbidden', 'an administrator already exists');
    if (outcome === 'became') await deps.audit.record('bootstrap', { account: principal.referenceId, via: 'become_an_administrator' });
    return [notify(outcome === 'became' ? 'you are now the administrator; guest signup is closed' : 'you are already an administrator')];
  },
};
