/** The invitations domain's operations: invite, list, revoke (administrators and the shell), and the link's side (anyone holding it). */
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { actorOf } from '../access/caller';
import { acceptWithPassword } from './accept';
import { invite, type InvitationView, type MailDestination, listInvitations, type NewInvitation, openInvitation, revoke } from './invitations';

export type { InvitationView, NewInvitation } from './invitations';

export interface InvitationOperations {
  invite(actor: Actor, input: NewInvitation): Promise<{ invitation: InvitationView; link: string; mail: MailDestination }>;
  /** Open invitations, newest first. */
  list(actor: Actor): Promise<InvitationView[]>;
  revoke(actor: Actor, id: string): Promise<InvitationView>;
  /** The address an open invitation is for (the signup page shows it), or why it cannot be used. */
  describe(token: string): Promise<{ email: string }>;
  /** Signup through an invitation link with a password: the new account's email is the invitation's. */
  accept(caller: Caller, token: string, input: { name: string; password: string; passwordConfirm: string }): Promise<{ email: string }>;
}

export function invitationOperations(s: Services): InvitationOperations {
  return {
    invite: (actor, input) => invite(s, actor, input),
    list: (actor) => listInvitations(s, actor),
    revoke: (actor, id) => revoke(s, actor, id),
    async describe(token) {
      return { email: (await openInvitation(s, { token })).email };
    },
    accept: async (caller, token, input) => ({ email: (await acceptWithPassword(s, await actorOf(s, caller), token, input)).email }),
  };
}
