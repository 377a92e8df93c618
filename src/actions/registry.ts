/** Every named action, and the one place that runs them (permission first, then the action). */
import { AppError, denied } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { can, GUEST, isGuest, RECOVERY_ONLY } from '../permission/check';
import { readAction } from '../store/guarded-rows';
import { becomeAnAdministrator } from './become-an-administrator';
import { signin } from './signin';
import { signup } from './signup';
import { changeEmail, changePassword, signoutEverywhere } from './credentials';
import { resetPassword, resetPasswordRequest } from './password-reset';
import { totpConfirm, totpDisable, totpEnroll } from './totp';
import { requestVerification, verifyEmail } from './verification';
import { unlockSignin } from './unlock';
import { listSessionsAction, refresh, revokeSessionAction, signout } from './sessions';
import { passkeyOptions, passkeyRegister, passkeySignin } from './passkeys';
import { invite } from './invite';
import { reauthenticate } from './reauthenticate';
import { signinByMail } from './signin-by-mail';
import { deleteAccountAction, endSessionAction, exportDataAction, listAppsAction, revokeAppAction, signoutOthersAction } from './own-account';
import type { ActionDef, ActionResult } from './types';

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
  unlockSignin,
  totpEnroll,
  totpConfirm,
  totpDisable,
  refresh,
  listSessionsAction,
  revokeSessionAction,
  signout,
  passkeyOptions,
  passkeyRegister,
  passkeySignin,
  invite,
  reauthenticate,
  signinByMail,
  signoutOthersAction,
  listAppsAction,
  revokeAppAction,
  exportDataAction,
  deleteAccountAction,
  endSessionAction,
];

export function findAction(onType: string, name: string): ActionDef {
  const def = ACTIONS.find((a) => a.onType === onType && a.name === name);
  if (!def) throw new AppError('not_found', 'no such action');
  return def;
}

/**
 * Runs an action for the actor `resolve` gives: not called at all for actions that ignore tokens
 * (signin, reset, verify), which always run as a guest, so a stale token never blocks them.
 */
export async function runAction(
  s: Services,
  def: ActionDef,
  resolve: () => Promise<Actor>,
  caller: { client: string; userAgent: string | null; device?: string | null },
  attributes: Record<string, unknown>,
): Promise<ActionResult> {
  return asAction(s, def, resolve, caller, (actor) => {
    checkInput(def, attributes);
    return def.run({ s, actor, attributes });
  });
}

/**
 * Runs `fn` as the action would run: with its actor and after its execute permission. For a
 * front end that takes an action in steps of its own (the sign-in page: the password, then the
 * code), so that the steps obey the same permission as the action.
 */
export async function asAction<T>(
  s: Services,
  def: ActionDef,
  resolve: () => Promise<Actor>,
  caller: { client: string; userAgent: string | null; device?: string | null },
  fn: (actor: Actor) => Promise<T>,
): Promise<T> {
  const actor: Actor = def.ignoresToken
    ? { principal: GUEST, via: 'http', client: caller.client, userAgent: caller.userAgent, session: null, device: caller.device ?? null }
    : await resolve();
  if (actor.principal.recovering && !def.whileRecovering) throw new AppError('reauthentication_required', RECOVERY_ONLY);
  if (!def.checksOwnPermission) {
    const action = await readAction(s.store.root, def.onType, def.name);
    if (!action) throw new AppError('not_found', `no action ${def.name} on ${def.onType}`);
    if (!can(actor.principal, 'execute', action.guard)) throw denied(isGuest(actor.principal), `run ${def.name}`);
  }
  return fn(actor);
}

/** The declared attributes: required ones present, each of its declared type (null is absent). */
function checkInput(def: ActionDef, attributes: Record<string, unknown>): void {
  for (const [field, need] of Object.entries(def.input)) {
    const value = Object.hasOwn(attributes, field) ? attributes[field] : undefined;
    if (value === undefined || value === null) {
      if (need === 'required' || need === 'object') throw new AppError('invalid_input', `${field} is required`);
    } else if (need === 'list') {
      if (!Array.isArray(value) || value.length > 50 || value.some((v) => typeof v !== 'string' || v.length > 200)) {
        throw new AppError('invalid_input', `${field} must be a list of at most 50 strings`);
      }
    } else if (need === 'object' || need === 'optional_object') {
      if (typeof value !== 'object' || Array.isArray(value)) throw new AppError('invalid_input', `${field} must be an object`);
    } else if (typeof value !== 'string') throw new AppError('invalid_input', `${field} must be a string`);
  }
}

/** Every action with the attributes it takes, for /openapi.json. */
export function actionCatalog(): ReadonlyArray<Pick<ActionDef, 'onType' | 'name' | 'input' | 'ignoresToken'>> {
  return ACTIONS;
}
