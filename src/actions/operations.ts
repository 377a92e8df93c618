/** The named actions' operations: run one for a request, and read or change their permissions. */
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { actorOf, requireAdministrator } from '../access/caller';
import { actionCatalog, findAction, runAction } from './registry';
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
}

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
  };
}
