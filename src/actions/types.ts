import type { Deps } from '../deps';
import type { Principal } from '../permission/check';

export interface ActionItem {
  ResponseType: string;
  Attributes: Record<string, unknown>;
}

export interface ActionContext {
  deps: Deps;
  principal: Principal;
  attributes: Record<string, unknown>;
  /** The client's address, for per-address limits and logs. */
  clientAddress: string;
}

export interface ActionDef {
  onType: string;
  name: string;
  /** Reads no bearer token: the caller is always treated as a guest (signin, reset, verify). */
  ignoresToken?: boolean;
  /** The action checks its own execute permission (signup does it inside its transaction). */
  checksOwnPermission?: boolean;
  run(ctx: ActionContext): Promise<ActionItem[]>;
}

export const notify = (message: string, type: 'success' | 'error' = 'success'): ActionItem => ({
  ResponseType: 'client.notify',
  Attributes: { type, title: type === 'success' ? 'success' : 'failed', message },
});
