/**
 * Invitations (contract section 13): an administrator (or the shell) invites an address into
 * chosen managed groups; the mailed link opens signup for that address alone, even while guest
 * signup is closed. Accepting makes the account through the one account-creation path, and in
 * the same transaction spends the invitation, joins the groups (and the administrators, if so
 * invited) and marks the address verified (the link proved it). Used, revoked and expired
 * invitations are refused with their own words.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { requireAdministrator } from '../access/caller';
import { createAccount, type CreatedAccount, type NewAccount } from '../accounts/create';
import { makeAdministrator } from '../accounts/administrators';
import { normalizeEmail } from '../accounts/validate';
import { checkedSkeleton } from '../accounts/lookalikes';
import { resolveGateGroup } from '../groups/manage';
import { addMembership, emailKeyTaken } from '../store/accounts';
import { findGroupByReference } from '../store/groups';
import { readWorld } from '../store/guarded-rows';
import {
  findInvitation,
  findInvitationByToken,
  insertInvitation,
  type InvitationRow,
  openInvitations,
  revokeInvitation,
  spendInvitation,
} from '../store/invitations';
import { invitationMessage } from '../mail/messages';
import { queueMail } from '../deliveries/queue';
import { mailRoute, type MailRoute } from '../deliveries/running';

const DAY_S = 24 * 60 * 60;
export const DEFAULT_INVITATION_TTL_S = 7 * DAY_S;
const MAX_INVITATION_TTL_S = 90 * DAY_S;
const MIN_INVITATION_TTL_S = 60 * 60;

const hash = (token: string) => createHash('sha256').update(token).digest('hex');
/** An invitation token as links carry it: 43 base64url characters (256 random bits). */
export const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type InvitationState = 'open' | 'used' | 'revoked' | 'expired';

export interface InvitationView {
  id: string;
  email: string;
  /** The groups' names, as they are now. */
  groups: string[];
  administrator: boolean;
  created_at: string;
  expires_at: string;
  state: InvitationState;
}

export interface NewInvitation {
  email: string;
  /** Managed groups by name or reference_id. */
  groups?: readonly string[];
  administrator?: boolean;
  expiresInSeconds?: number;
}

const stateOf = (row: InvitationRow, now: number): InvitationState =>
  row.used_at !== null ? 'used' : row.revoked_at !== null ? 'revoked' : row.expires_at <= now ? 'expired' : 'open';

const groupIdsOf = (row: InvitationRow): string[] => JSON.parse(row.groups) as string[];

async function view(s: Services, row: InvitationRow): Promise<InvitationView> {
  const names: string[] = [];
  for (const id of groupIdsOf(row)) names.push((await findGroupByReference(s.store.root, id))?.name ?? '(deleted group)');
  return {
    id: row.reference_id,
    email: row.email,
    groups: names,
    administrator: row.administrator,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
    state: stateOf(row, s.clock.now()),
  };
}

export const invitationLink = (publicUrl: string, token: string) => `${publicUrl}/signup?invite=${token}`;

/** Where an invitation's mail goes: an SMTP server, the outbox folder (where nobody receives it), or a server yet to start. */
export type MailDestination = MailRoute;

export async function invite(s: Services, actor: Actor, input: NewInvitation): Promise<{ invitation: InvitationView; link: string; mail: MailDestination }> {
  requireAdministrator(actor, 'invite people');
  const { email, key } = normalizeEmail(input.email);
  const ttl = input.expiresInSeconds ?? DEFAULT_INVITATION_TTL_S;
  if (!Number.isInteger(ttl) || ttl < MIN_INVITATION_TTL_S || ttl > MAX_INVITATION_TTL_S) {
    throw new AppError('invalid_input', 'an invitation expires in 1 hour to 90 days ({--expires}: 1d, 7d, 90d)');
  }
  if ((input.groups ?? []).length > 50) throw new AppError('invalid_input', 'at most 50 groups per invitation');
  if (await emailKeyTaken(s.store.root, key)) throw new AppError('email_taken', 'an account with this email already exists');
  // An address that looks like another account's is refused now, naming it, rather than when the
  // person accepts (where they are told only that the address is taken).
  await checkedSkeleton(s.store.root, key, { reveal: true });
  // Only managed groups: any account can make a group of any name, and an invitation grants it.
  const groups: string[] = [];
  for (const g of input.groups ?? []) {
    const found = await resolveGateGroup(s.store.root, g);
    if (!groups.includes(found.reference_id)) groups.push(found.reference_id);
  }
  const token = randomBytes(32).toString('base64url');
  const link = invitationLink(s.config.publicUrl, token);
  // The invitation and its mail are one write: a running server sends the mail (never this call).
  const row = await s.store.transaction(async (tx) => {
    const created = await insertInvitation(tx, {
      email,
      email_key: key,
      token_hash: hash(token),
      groups: JSON.stringify(groups),
      administrator: input.administrator === true,
      created_by: actor.principal.accountId,
      expires_at: s.clock.now() + ttl * 1000,
    });
    await queueMail(tx, invitationMessage(link, email, ttl, s.messages.translator(s.messages.defaultLanguage)), 'invitation');
    return created;
  });
  s.sender.nudge();
  await s.audit.record('invitation_created', actor, {
    account: null,
    invitation: row.reference_id,
    groups: groups.join(','),
    administrator: row.administrator,
  });
  return { invitation: await view(s, row), link, mail: await mailRoute(s.store, s.mailer, s.sender.sending) };
}

export async function listInvitations(s: Services, actor: Actor): Promise<InvitationView[]> {
  requireAdministrator(actor, 'list invitations');
  return Promise.all((await openInvitations(s.store.root)).map((r) => view(s, r)));
}

export async function revoke(s: Services, actor: Actor, id: string): Promise<InvitationView> {
  requireAdministrator(actor, 'revoke invitations');
  const row = await findInvitation(s.store.root, id.trim().toLowerCase());
  if (!row) throw new AppError('not_found', 'no such invitation');
  if (!(await revokeInvitation(s.store.root, row.id))) throw new AppError('conflict', `this invitation is ${stateOf(row, s.clock.now())} already`);
  await s.audit.record('invitation_revoked', actor, { account: null, invitation: row.reference_id });
  return view(s, (await findInvitation(s.store.root, row.reference_id))!);
}

const REFUSED: Record<Exclude<InvitationState, 'open'>, string> = {
  used: 'this invitation was used already: sign in with the account it made',
  revoked: 'this invitation was withdrawn by an administrator',
  expired: 'this invitation has expired: ask for a new one',
};

/**
 * The open invitation a link's token names (or, for a ceremony that began with one, its id), or
 * a refusal that says why not.
 */
export async function openInvitation(s: Services, which: { token: string } | { id: string }): Promise<InvitationRow> {
  const row =
    'id' in which
      ? await findInvitation(s.store.root, which.id)
      : INVITATION_TOKEN.test(which.token)
        ? await findInvitationByToken(s.store.root, hash(which.token))
        : undefined;
  if (!row) throw new AppError('token_invalid', 'this invitation link is not valid: check that it was copied whole');
  const state = stateOf(row, s.clock.now());
  if (state !== 'open') throw new AppError(state === 'expired' ? 'token_expired' : 'token_invalid', REFUSED[state]);
  return row;
}

/**
 * Makes the invited account: the invitation's email (whatever a form said), then in one
 * transaction the invitation spent, its groups joined, the address verified. `also` adds what the
 * signup brings (a passkey).
 */
export async function acceptInvitation(
  s: Services,
  actor: Actor,
  which: { token: string } | { id: string },
  input: Omit<NewAccount, 'email' | 'emailKey'>,
  also?: (tx: Tx, account: { id: number; referenceId: string }) => Promise<void>,
): Promise<CreatedAccount> {
  const row = await openInvitation(s, which);
  const created = await createAccount(
    s,
    actor,
    // The address is the invitation's, which its mail proved.
    { ...input, email: row.email, emailKey: row.email_key, emailVerified: true },
    async (tx, account) => {
      // Spent first: of two acceptances racing, the loser's account is rolled back whole.
      if (!(await spendInvitation(tx, row.id, account.id))) throw new AppError('token_invalid', REFUSED.used);
      const membership = (await readWorld(tx, 'membership')).row.default_permission;
      for (const id of groupIdsOf(row)) {
        const group = await findGroupByReference(tx, id);
        if (group) await addMembership(tx, account.id, group.id, membership); // a group deleted since is skipped
      }
      if (row.administrator) await makeAdministrator(tx, account.id);
      if (also) await also(tx, account);
    },
    { way: 'invitation' },
  );
  await s.audit.record('invitation_accepted', actor, { invitation: row.reference_id, account: created.referenceId });
  if (row.administrator) await s.audit.record('administrator_added', actor, { account: created.referenceId, invitation: row.reference_id });
  return created;
}
