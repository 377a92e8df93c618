/**
 * Who asks the core for something, and through which front end: the permission principal, the
 * front end (`via`, written into every audit row) and the client's address (HTTP only).
 */
import { OPERATOR, Principal } from './permission/check';

export type Via = 'http' | 'cli' | 'ldap' | 'scim' | 'config' | 'source';

export interface Actor {
  readonly principal: Principal;
  readonly via: Via;
  /** The client's address, for per-address limits and audit rows; null at the shell. */
  readonly client: string | null;
  /** The client's User-Agent, kept with the sessions it opens. */
  readonly userAgent: string | null;
  /** The session of the caller's token; null for guests and the shell. */
  readonly session: string | null;
  /** The browser's device cookie (pages only): a device that signed in before is familiar. */
  readonly device?: string | null;
  /** The SCIM token a provisioning request came with (its name), named in every audit row it causes. */
  readonly scimToken?: string;
}

/** The operator at the shell. */
export const SHELL: Actor = Object.freeze({ principal: OPERATOR, via: 'cli', client: null, userAgent: null, session: null });

/** A configuration file being applied (`gatehouse config apply`, `serve --config`): the operator, and the one writer of what the file manages. */
export const CONFIG: Actor = Object.freeze({ principal: OPERATOR, via: 'config', client: null, userAgent: null, session: null });

/** A running server's scheduled sync of a directory source: the operator, as the shell's `source sync` is. */
export const SOURCE_SYNC: Actor = Object.freeze({ principal: OPERATOR, via: 'source', client: null, userAgent: null, session: null });

/** A request as the core sees it: the bearer token it carries (never a raw header) and where it came from. */
export interface Caller {
  /** The access token the request carries, or null for a guest. */
  readonly token: string | null;
  readonly client: string;
  readonly userAgent: string | null;
  /** The pages' long-lived device cookie, when the request came from a browser that has one. */
  readonly device?: string | null;
}
