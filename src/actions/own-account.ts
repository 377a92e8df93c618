/**
 * A person's own account (the account page's newer parts): sign out everywhere else, the apps
 * holding access (list, revoke one), one's data as JSON, deleting one's own account, and the
 * new-sign-in mail's link that ends one session.
 */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { callerAccount } from '../accounts/acting';
import { endSessionByLink, signoutOthers } from '../accounts/sessions';
import { listApps, revokeApp } from '../accounts/connected-apps';
import { exportData } from '../accounts/own-data';
import { deleteOwnAccount } from '../accounts/delete';
import { ActionDef, said } from './types';

export const signoutOthersAction: ActionDef = {
  onType: 'user_account',
  name: 'signout_others',
  whileRecovering: true,
  input: {},
  async run(ctx) {
    const account = await callerAccount(ctx);
    if (ctx.actor.session === null) throw new AppError('invalid_input', 'this token belongs to no session; use signout_everywhere');
    const ended = await signoutOthers(ctx.s, ctx.actor, account, ctx.actor.session);
    return said(ended === 1 ? '1 other session is signed out' : `${ended} other sessions are signed out`);
  },
};

export const listAppsAction: ActionDef = {
  onType: 'user_account',
  name: 'list_apps',
  whileRecovering: true,
  input: {},
  async run(ctx) {
    return { apps: await listApps(ctx.s, await callerAccount(ctx)) };
  },
};

export const revokeAppAction: ActionDef = {
  onType: 'user_account',
  name: 'revoke_app',
  input: { kind: 'required', app_id: 'required' },
  async run(ctx) {
    const account = await callerAccount(ctx);
    const r = await revokeApp(ctx.s, ctx.actor, account, stringField(ctx.attributes, 'kind')!, stringField(ctx.attributes, 'app_id')!.slice(0, 200));
    return said(`${r.name} no longer has access; its tokens are ended`);
  },
};

export const exportDataAction: ActionDef = {
  onType: 'user_account',
  name: 'export_data',
  input: {},
  async run(ctx) {
    return { data: await exportData(ctx.s, ctx.actor, await callerAccount(ctx)) };
  },
};

export const deleteAccountAction: ActionDef = {
  onType: 'user_account',
  name: 'delete_account',
  input: { password: 'optional' },
  async run(ctx) {
    const account = await callerAccount(ctx);
    await deleteOwnAccount(ctx.s, ctx.actor, account, stringField(ctx.attributes, 'password', false) ?? null);
    return said('your account is deleted');
  },
};

export const endSessionAction: ActionDef = {
  onType: 'user_account',
  name: 'end_session',
  input: { token: 'required' },
  ignoresToken: true,
  async run(ctx) {
    await endSessionByLink(ctx.s, ctx.actor, stringField(ctx.attributes, 'token')!.trim());
    return said('that session is signed out');
  },
};
