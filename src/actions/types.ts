import type { Actor } from '../actor';
import type { Services } from '../services';

import type { SessionView } from '../accounts/sessions';
import type { PasskeyView } from '../passkeys/views';
import type { InvitationView } from '../invitations/invitations';
import type { ConnectedApp } from '../accounts/connected-apps';

/**
 * What an action answers, typed. The HTTP front end turns it into the Daptin-shaped list of
 * `{ResponseType, Attributes}` items (http/action-items.ts); the pages read it as it is.
 */
export interface ActionResult {
  /** A new session's tokens. */
  readonly session?: { readonly token: string; readonly refreshToken: string };
  /** A TOTP enrolment begun: the secret and its otpauth:// URI. */
  readonly totpSecret?: { readonly secret: string; readonly uri: string };
  /** Recovery codes, shown once. */
  readonly recoveryCodes?: readonly string[];
  /** The caller's open sessions. */
  readonly sessions?: readonly SessionView[];
  /** What was done, in words. */
  readonly message?: string;
  /** WebAuthn options for the browser (passkey_options), in their JSON form. */
  readonly passkeyOptions?: unknown;
  /** A passkey just added. */
  readonly passkey?: PasskeyView;
  /** An invitation made (invite): never its token, which only the mail carries. */
  readonly invitation?: InvitationView;
  /** A mailed sign-in code asked for (signin_by_mail): the request's secret, sent back with the code. */
  readonly mailCodeRequest?: string;
  /** The apps holding access to the caller's account (list_apps). */
  readonly apps?: readonly ConnectedApp[];
  /** What the server holds about the caller (export_data). */
  readonly data?: Readonly<Record<string, unknown>>;
  /** A new account (signup). */
  readonly created?: { readonly referenceId: string; readonly email: string; readonly usergroupId: string };
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
  /** Open to a recovery link's session (adding a passkey or a password, signing out); every other action refuses it. */
  whileRecovering?: true;
  /** The action checks its own execute permission (signup does it inside its transaction). */
  checksOwnPermission?: boolean;
  /**
   * The attributes it reads: strings, (`object`) a required JSON object, (`optional_object`) one
   * that may be left out, or (`list`) an optional array of strings. The registry refuses
   * a missing required one or one of the wrong type before the action runs, and /openapi.json
   * documents them from here.
   */
  readonly input: Readonly<Record<string, 'required' | 'optional' | 'object' | 'optional_object' | 'list'>>;
  run(ctx: ActionContext): Promise<ActionResult>;
}

/** A result that only says what was done. */
export const said = (message: string): ActionResult => ({ message });
