/**
 * An action's typed result as the HTTP API answers it: the Daptin-shaped list of
 * `{ResponseType, Attributes}` items that the published client and the regression suites read.
 * The order is fixed: tokens, then the action's own data, then the message, then a new account.
 */
import type { ActionResult } from '../core';

export interface ActionItem {
  ResponseType: string;
  Attributes: Record<string, unknown>;
}

const notify = (message: string): ActionItem => ({ ResponseType: 'client.notify', Attributes: { type: 'success', title: 'success', message } });

export function actionItems(r: ActionResult): ActionItem[] {
  const items: ActionItem[] = [];
  if (r.session) {
    // `token`, as clients of the original system read it, and `refresh_token`.
    items.push({ ResponseType: 'client.store.set', Attributes: { key: 'token', value: r.session.token } });
    items.push({ ResponseType: 'client.store.set', Attributes: { key: 'refresh_token', value: r.session.refreshToken } });
  }
  if (r.totpSecret) items.push({ ResponseType: 'totp.secret', Attributes: { secret: r.totpSecret.secret, uri: r.totpSecret.uri } });
  if (r.recoveryCodes) items.push({ ResponseType: 'totp.recovery_codes', Attributes: { codes: r.recoveryCodes } });
  if (r.passkeyOptions !== undefined) items.push({ ResponseType: 'client.store.set', Attributes: { key: 'passkey_options', value: r.passkeyOptions } });
  if (r.passkey) items.push({ ResponseType: 'passkey', Attributes: { ...r.passkey } });
  if (r.invitation) items.push({ ResponseType: 'invitation', Attributes: { ...r.invitation } });
  if (r.mailCodeRequest !== undefined) items.push({ ResponseType: 'client.store.set', Attributes: { key: 'mail_code_request', value: r.mailCodeRequest } });
  if (r.sessions) items.push({ ResponseType: 'sessions', Attributes: { sessions: r.sessions } });
  if (r.apps) items.push({ ResponseType: 'apps', Attributes: { apps: r.apps } });
  if (r.data) items.push({ ResponseType: 'account.data', Attributes: { data: r.data } });
  if (r.message !== undefined) items.push(notify(r.message));
  if (r.created) {
    const c = r.created;
    items.push({ ResponseType: 'account.created', Attributes: { reference_id: c.referenceId, email: c.email, usergroup_id: c.usergroupId } });
  }
  return items;
}
