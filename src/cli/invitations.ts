/** `gatehouse user invite | invitations | invite-revoke`: invitations, from the shell (contract section 13). */
import type { Command } from 'commander';
import { parseDuration } from '../config';
import type { InvitationView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];

const show = (v: InvitationView) =>
  keyValues([
    ['id', v.id],
    ['email', v.email],
    ['groups', v.groups.join(', ') || '-'],
    ['administrator', v.administrator],
    ['expires', v.expires_at],
    ['state', v.state],
  ]);

export function registerInvitations(user: Command, io: Io): void {
  user
    .command('invite <email>')
    .description('invite someone by mail: the link opens signup for this address alone, even while guest signup is closed')
    .option('--group <group>', 'a managed group the account joins (repeatable)', collect)
    .option('--administrator', 'the account becomes an administrator')
    .option('--expires <duration>', 'how long the link works (1h to 90d)', '7d')
    .option('--print-link', 'also print the link (hand it over yourself when no mail can reach the person)')
    .action(async (email: string, o: { group?: string[]; administrator?: boolean; expires: string; printLink?: boolean }, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.invitations.invite(core.shell, {
          email,
          groups: o.group ?? [],
          administrator: o.administrator === true,
          expiresInSeconds: parseDuration(o.expires, '--expires'),
        });
        // The link is the invitation's only key: printed when asked for, never otherwise.
        const doc = o.printLink ? { invitation: r.invitation, mail: r.mail, link: r.link } : { invitation: r.invitation, mail: r.mail };
        // Queued: the running server sends it (this command sends nothing itself).
        const mail =
          r.mail.via === 'smtp'
            ? `mail:           queued; the server sends it through the SMTP server ${r.mail.to}\n`
            : r.mail.via === 'outbox'
              ? `mail:           queued; the server writes it to ${r.mail.to} (no --smtp-url: nobody receives it; give --print-link to hand the link over)\n`
              : `mail:           queued; no server has run on this store yet: it is sent when gatehouse serve starts\n`;
        emit(io, wantsJson(c), doc, () => `${show(r.invitation)}${mail}${o.printLink ? `link:           ${r.link}\n` : ''}`);
      }),
    );

  user
    .command('invitations')
    .description('open invitations (not used, revoked or expired), newest first')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.invitations.list(core.shell);
        emit(io, wantsJson(c), { invitations: list }, () =>
          list.length === 0
            ? 'no open invitations\n'
            : table([
                ['ID', 'EMAIL', 'GROUPS', 'ADMIN', 'EXPIRES'],
                ...list.map((v) => [v.id, v.email, v.groups.join(',') || '-', v.administrator ? 'yes' : 'no', v.expires_at]),
              ]),
        );
      }),
    );

  user
    .command('invite-revoke <id>')
    .description('withdraw an open invitation: its link stops working at once')
    .action(async (id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const v = await core.invitations.revoke(core.shell, id);
        emit(io, wantsJson(c), { invitation: v }, () => `invitation ${v.id} for ${v.email}: revoked\n`);
      }),
    );
}
