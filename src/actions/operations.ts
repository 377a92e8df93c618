/** The named actions' operations: run one for a request, and read or change their permissions. */
import type { Actor, Caller } from '../actor';
import { AppError } from '../errors';
import type { Services } from '../services';
import { actorOf, requireAdministrator } from '../access/caller';
import { actionCatalog, asAction, findAction, runAction } from './registry';
import { signin } from './signin';
import { finishPasswordStep, holdStep, passwordStep } from '../accounts/password-signin';
import { mailCodeBrowser, mailCodeSignin, requestMailCode } from '../accounts/mail-signin';
import { signinByMail } from './signin-by-mail';
import { can, GUEST } from '../permission/check';
import { readAction } from '../store/guarded-rows';
import { assertRecentSignin } from '../accounts/recent-signin';
import type { ActionResult } from './types';
import { getActionView, listActionViews, PermissionChange, setActionPermissionByName, ActionPermissionView } from '../records/action-permissions';

export interface ActionOperations {
  /** 404 for an unknown action (checked before the request body is read). */
  assertExists(type: string, name: string): void;
  run(caller: Caller, type: string, name: string, attributes: Record<string, unknown>): Promise<ActionResult>;
  list(actor: Actor): Promise<ActionPermissionView[]>;
  get(actor: Actor, name: string): Promise<ActionPermissionView>;
  setPermission(actor: Actor, name: string, change: PermissionChange): Promise<{ before: ActionPermissionView; after: ActionPermissionView; changed: boolean }>;
  /**
   * The rule the actions that add a way in apply, for a front end about to call a domain operation
   * that adds one (the console's SCIM tokens): 403 reauthentication_required unless the actor's
   * session signed in within --recent-signin; never asked at the shell.
   */
  assertRecentSignin(actor: Actor): Promise<void>;
  /**
   * The signin action in two steps, for the sign-in page (the same permission): the password, then
   * for an account with TOTP a step that asks for the code, held for this browser (its device
   * cookie) for a few minutes, so the password is typed once.
   */
  signinStep(caller: Caller, input: { email: string; password: string }): Promise<{ session: Tokens } | { step: string }>;
  /** The code (or a recovery code) that finishes the sign-in page's step: a session. */
  finishSigninStep(caller: Caller, step: string, code: string): Promise<Tokens>;
  /** Whether guests may sign in by a mailed code (the signin_by_mail action's guest permission). */
  signinByMailOpen(): Promise<boolean>;
  /** The sign-in page asks for a code by mail, for this browser (its device cookie): the request's handle. */
  mailCodeRequest(caller: Caller, email: string): Promise<{ handle: string }>;
  /** Whether this browser asked for the request a mailed link names. */
  mailCodeBrowser(caller: Caller, handle: string): Promise<'this' | 'other' | 'gone'>;
  /** The code typed (or the link opened) in the browser that asked: a session, or for an account with TOTP the step that asks its code. */
  mailCodeSignin(caller: Caller, handle: string, code: string): Promise<{ session: Tokens } | { step: string }>;
}

/** A new session's tokens. */
type Tokens = { token: string; refreshToken: string };
const tokensOf = (issued: Tokens): Tokens => ({ token: issued.token, refreshToken: issued.refreshToken });

/** The actions as the HTTP API describes them (/openapi.json). */
export const describeActions = () => actionCatalog().map((a) => ({ onType: a.onType, name: a.name, input: a.input, ignoresToken: a.ignoresToken === true }));

export function actionOperations(s: Services): ActionOperations {
  return {
    assertExists: (type, name) => void findAction(type, name),
    run: (caller, type, name, attributes) => runAction(s, findAction(type, name), () => actorOf(s, caller), caller, attributes),
    async list(actor) {
      requireAdministrator(actor, 'list actions');
      return listActionViews(s);
    },
    async get(actor, name) {
      requireAdministrator(actor, 'read actions');
      return getActionView(s, name);
    },
    setPermission: (actor, name, change) => setActionPermissionByName(s, actor, name, change),
    assertRecentSignin: (actor) => assertRecentSignin(s, actor),
    async signinStep(caller, input) {
      const done = await asAction(
        s,
        signin,
        () => actorOf(s, caller),
        caller,
        (actor) => passwordStep(s, actor, input, caller.device ?? null),
      );
      return 'step' in done ? done : { session: tokensOf(done.session) };
    },
    async finishSigninStep(caller, step, code) {
      const { session } = await asAction(
        s,
        signin,
        () => actorOf(s, caller),
        caller,
        (actor) => finishPasswordStep(s, actor, step, caller.device ?? null, { otp: code }),
      );
      return tokensOf(session!);
    },
    async signinByMailOpen() {
      const action = await readAction(s.store.root, 'user_account', 'signin_by_mail');
      return action !== undefined && can(GUEST, 'execute', action.guard);
    },
    mailCodeRequest: (caller, email) =>
      asAction(
        s,
        signinByMail,
        () => actorOf(s, caller),
        caller,
        (actor) => requestMailCode(s, actor, email, bindingOf(caller)),
      ),
    mailCodeBrowser: async (caller, handle) => mailCodeBrowser(s, handle, caller.device ?? null),
    async mailCodeSignin(caller, handle, code) {
      return asAction(
        s,
        signinByMail,
        () => actorOf(s, caller),
        caller,
        async (actor) => {
          const result = await mailCodeSignin(s, actor, { handle, binding: caller.device ?? null, code }, 'step');
          if (!result.secondFactorStep) return { session: tokensOf(result.session!) };
          return { step: await holdStep(s, result.account, caller.device ?? null, 'mail') };
        },
      );
    },
  };
}

/** The browser's device cookie binds a page's request; without one, nothing could spend it. */
function bindingOf(caller: Caller): string {
  if (!caller.device) throw new AppError('invalid_input', "this browser did not keep the sign-in page's cookie: allow cookies for this site and ask again");
  return caller.device;
}
