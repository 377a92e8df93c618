/** Every named action, and the one place that runs them (permission first, then the action). */
import { AppError, denied } from '../errors';
import { can, GUEST, isGuest } from '../permission/check';
import { readActionGuard } from '../store/hot';
import { becomeAnAdministrator } from './become-an-administrator';
import { signin } from './signin';
import { signup } from './signup';
import { changeEmail, changePassword, signoutEverywhere } from './credentials';
import { resetPassword, resetPasswordRequest } from './password-reset';
import { totpConfirm, totpDisable, totpEnroll } from './totp';
import { requestVerification, verifyEmail } from './verification';
import type { ActionContext, ActionDef, ActionItem } from './types';

const ACTIONS: readonly ActionDef[] = [
  signup,
  signin,
  becomeAnAdministrator,
  changePassword,
  changeEmail,
  signoutEverywhere,
  requestVerification,
  verifyEmail,
  resetPasswordRequest,
  resetPassword,
  totpEnroll,
  totpConfirm,
  totpDisable,
];

export function findAction(onType: string, name: string): ActionDef | undefined {
  return ACTIONS.find((a) => a.onType === onType && a.name === name);
}

export async function runAction(def: ActionDef, ctx: ActionContext): Promise<ActionItem[]> {
  const principal = def.ignoresToken ? GUEST : ctx.principal;
  if (!def.checksOwnPermission) {
    const guard = await readActionGuard(ctx.deps.store, def.onType, def.name);
    if (!guard) throw new AppError('not_found', `no action ${def.name} on ${def.onType}`);
    if (!can(principal, 'execute', guard)) throw denied(isGuest(principal), `run ${def.name}`);
  }
  return def.run({ ...ctx, principal });
}
