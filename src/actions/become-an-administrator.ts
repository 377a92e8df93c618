/** Kept for clients written for the original system: only ever makes the first administrator. */
import { AppError } from '../errors';
import { claimFirstAdministrator } from '../accounts/administrators';
import { isAdministrator, lockAccounts } from '../store/accounts';
import { ActionDef, said } from './types';

export const becomeAnAdministrator: ActionDef = {
  onType: 'world',
  name: 'become_an_administrator',
  input: {},
  async run({ s, actor }) {
    const accountId = actor.principal.accountId;
    if (accountId === null) throw new AppError('unauthenticated', 'sign in first');
    const outcome = await s.store.transaction(async (tx) => {
      await lockAccounts(tx);
      if (await isAdministrator(tx, accountId)) return 'already';
      return (await claimFirstAdministrator(tx, accountId)) ? 'became' : 'refused';
    });
    if (outcome === 'refused') throw new AppError('forbidden', 'an administrator already exists', { reason: 'administrator_exists' });
    if (outcome === 'became') await s.audit.record('bootstrap', actor, { account: actor.principal.referenceId, outcome: 'promoted' });
    return said(outcome === 'became' ? 'you are now the administrator; guest signup is closed' : 'you are already an administrator');
  },
};
