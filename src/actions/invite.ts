/** user_account/invite: an administrator invites an address (contract section 13). */
import { parseDuration } from '../config';
import { stringField } from '../accounts/validate';
import { invite as makeInvitation } from '../invitations/invitations';
import { assertRecentSignin } from '../accounts/recent-signin';
import type { ActionDef } from './types';

export const invite: ActionDef = {
  onType: 'user_account',
  name: 'invite',
  input: { email: 'required', groups: 'list', expires_in: 'optional' },
  async run({ s, actor, attributes }) {
    // An invitation makes a way in for someone (into the groups it names): a recent sign-in, never an API key.
    await assertRecentSignin(s, actor);
    const groups = (attributes.groups as string[] | undefined) ?? [];
    const expiresIn = stringField(attributes, 'expires_in', false);
    const { invitation, mail } = await makeInvitation(s, actor, {
      email: stringField(attributes, 'email')!,
      groups,
      expiresInSeconds: expiresIn === undefined ? undefined : parseDuration(expiresIn, 'expires_in'),
    });
    // Said as it is: without SMTP the mail is a file in the outbox folder, and nobody receives it.
    const message =
      mail.via === 'smtp'
        ? `an invitation is on its way to ${invitation.email} (by the SMTP server ${mail.to})`
        : `no SMTP server is set: the invitation for ${invitation.email} was written to ${mail.to} and not sent; hand its link over yourself`;
    return { invitation, message };
  },
};
