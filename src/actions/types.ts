import type { Actor } from '../actor';
import type { Services } from '../services';

export interface ActionItem {
  ResponseType: string;
  Attributes: Record<string, unknown>;
}

export interface ActionContext {
  s: Services;
  actor: Actor;
  attributes: Record<string, unknown>;
}

export interface ActionDef {
  onType: string;
  name: string;
  /** Reads no bearer token: the caller is always treated as a guest (signin, reset, verify). */
  ignoresToken?: boolean;
  /** The action checks its own execute permission (signup does it inside its transaction). */
  checksOwnPermission?: boolean;
  /**
   * The attributes it reads, all strings: the registry refuses a missing required one or a
   * non-string before the action runs, and /openapi.json documents them from here.
   */
  readonly input: Readonly<Record<string, 'required' | 'optional'>>;
  run(ctx: ActionContext): Promise<ActionItem[]>;
}

export const notify = (message: string, type: 'success' | 'error' = 'success'): ActionItem => ({
  ResponseType: 'client.notify',
  Attributes: { type, title: type === 'success' ? 'success' : 'failed', message },
});
