/**
 * `bootstrap-admin`: with no administrator, create the account (or promote an existing one whose
 * password matches), make it an administrator and close guest signup, in one transaction. The
 * same administrator again: nothing changes. Another administrator exists: refused.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { findAccountByEmailKey, isAdministrator, countAdministrators, lockAccounts } from '../store/accounts';
import { claimFirstAdministrator } from './administrators';
import { createAccount, newAccountFrom } from './create';
import { normalizeEmail } from './validate';

export type BootstrapOutcome = 'created' | 'promoted' | 'unchanged';

const taken = () => new AppError('forbidden', 'another administrator already exists', { reason: 'administrator_exists' });

export async function bootstrapAdmin(
  s: Services,
  actor: Actor,
  input: { email: string; name?: string; password: string },
): Promise<{ outcome: BootstrapOutcome; referenceId: string }> {
  if (!actor.principal.isAdmin) throw new AppError('forbidden', 'only the operator may bootstrap an administrator', { reason: 'administrators_only' });
  const { key } = normalizeEmail(input.email);
  const existing = await findAccountByEmailKey(s.store.root, key);
  if (existing) {
    const check = await s.passwords.verify(input.password, existing.password);
    if (!check.ok) throw new AppError('invalid_credentials', 'an account with this email exists and the password does not match');
    const outcome = await s.store.transaction(async (tx) => {
      await lockAccounts(tx);
      if (await isAdministrator(tx, existing.id)) return 'unchanged' as const;
      if (!(await claimFirstAdministrator(tx, existing.id))) throw taken();
      return 'promoted' as const;
    });
    if (outcome !== 'unchanged') await s.audit.record('bootstrap', actor, { account: existing.reference_id, outcome });
    return { outcome, referenceId: existing.reference_id };
  }
  if ((await countAdministrators(s.store.root)) > 0) throw taken();
  const created = await createAccount(s, actor, newAccountFrom(input, s.config.passwordMinLength));
  // Someone else became the first administrator between our check and our transaction.
  if (!created.becameAdministrator) throw taken();
  return { outcome: 'created', referenceId: created.referenceId };
}
