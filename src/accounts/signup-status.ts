/** Whether a guest could sign up now, and if not, which check of the signup chain closes it. */
import { can, GUEST } from '../permission/check';
import type { Tx } from '../store/connection';
import { readAction, readWorld } from '../store/guarded-rows';

export type SignupCheck = 'signup_action_execute' | 'user_account_create' | 'usergroup_create' | 'membership_refer';

export async function signupStatus(tx: Tx): Promise<{ open: boolean; closedBy: SignupCheck | null }> {
  const action = await readAction(tx, 'user_account', 'signup');
  if (!action || !can(GUEST, 'execute', action.guard)) return { open: false, closedBy: 'signup_action_execute' };
  const chain: Array<[string, 'create' | 'refer', SignupCheck]> = [
    ['user_account', 'create', 'user_account_create'],
    ['usergroup', 'create', 'usergroup_create'],
    ['membership', 'refer', 'membership_refer'],
  ];
  for (const [table, op, check] of chain) {
    if (!can(GUEST, op, (await readWorld(tx, table)).guard)) return { open: false, closedBy: check };
  }
  return { open: true, closedBy: null };
}
