/** Session actions: refresh (a new pair for a refresh token), list, revoke one, sign out this one. */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { listSessions, refreshSession, revokeSession } from '../accounts/sessions';
import { sessionOf } from './account-helpers';
import { callerAccount } from '../accounts/acting';
import { ActionDef, said } from './types';

export const refresh: ActionDef = {
  onType: 'user_account',
  name: 'refresh',
  input: { refresh_token: 'required' },
  ignoresToken: true,
  async run(ctx) {
    const token = stringField(ctx.attributes, 'refresh_token')!;
    if (token.length === 0 || token.length > 200) throw new AppError('invalid_token', 'the refresh token is not valid; sign in again');
    return { session: sessionOf(await refreshSession(ctx.s, ctx.actor, token)) };
  },
};

export const listSessionsAction: ActionDef = {
  onType: 'user_account',
  name: 'list_sessions',
  whileRecovering: true,
  input: {},
  async run(ctx) {
    const account = await callerAccount(ctx);
    return { sessions: await listSessions(ctx.s, account.id, ctx.actor.session) };
  },
};

export const revokeSessionAction: ActionDef = {
  onType: 'user_account',
  name: 'revoke_session',
  whileRecovering: true,
  input: { session_id: 'required' },
  async run(ctx) {
    const account = await callerAccount(ctx);
    const id = stringField(ctx.attributes, 'session_id')!;
    await revokeSession(ctx.s, ctx.actor, account.id, id.slice(0, 64));
    return said(id === ctx.actor.session ? 'this session is signed out' : 'the session is signed out');
  },
};

export const signout: ActionDef = {
  onType: 'user_account',
  name: 'signout',
  whileRecovering: true,
  input: {},
  async run(ctx) {
    const account = await callerAccount(ctx);
    if (ctx.actor.session === null) throw new AppError('invalid_input', 'this token belongs to no session; use signout_everywhere');
    await revokeSession(ctx.s, ctx.actor, account.id, ctx.actor.session, 'signout');
    return said('signed out');
  },
};
