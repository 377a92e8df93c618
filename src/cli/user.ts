/** `gatehouse user list | show | create | delete | set-password | revoke-sessions | recovery-link | sessions | revoke-session | disable | enable | unlock | promote | demote | totp-reset | passkeys | passkey-remove | invite | invitations | invite-revoke` */
import { parseDuration } from '../config';
import type { Command } from 'commander';
import type { AccountView } from '../core';
import { AppError } from '../errors';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';
import { addPasswordOptions, PasswordFlags, readPassword } from './password-input';
import { registerInvitations } from './invitations';
import { registerAppPasswords } from './app-passwords';
import { registerSshKeys } from './ssh-keys';
import { registerApiKeys } from './api-keys';

const showAccount = (v: AccountView, groups?: string) =>
  keyValues([
    ['email', v.email],
    ['username', v.username],
    ['name', v.name],
    ['reference_id', v.reference_id],
    ['administrator', v.administrator],
    ['disabled', v.disabled],
    ['email verified', v.email_verified],
    ['TOTP', v.totp_enabled],
    ['created', v.created_at],
    ...(groups === undefined ? [] : [['groups', groups || '-'] as [string, string]]),
  ]);

/** One-line result of a state change; `changed: false` is a no-op (exit 0). */
function done(io: Io, c: Command, account: { reference_id: string; email: string }, changed: boolean, message: string) {
  emit(io, wantsJson(c), { account: { reference_id: account.reference_id, email: account.email }, changed }, () => `${account.email}: ${message}\n`);
}

export function registerUser(program: Command, io: Io): void {
  const user = program.command('user').description('manage accounts');

  user
    .command('list')
    .description('every account')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const views = await core.accounts.list(core.shell);
        emit(io, wantsJson(c), { accounts: views }, () =>
          table([
            ['EMAIL', 'USERNAME', 'NAME', 'ADMIN', 'DISABLED', 'VERIFIED', 'TOTP', 'CREATED'],
            ...views.map((v) => [v.email, v.username, v.name, yes(v.administrator), yes(v.disabled), yes(v.email_verified), yes(v.totp_enabled), v.created_at]),
          ]),
        );
      }),
    );

  user
    .command('show <email>')
    .description('one account')
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.accounts.show(core.shell, email);
        const groups = await core.accounts.groupsOf(core.shell, view.reference_id);
        const named = (g: (typeof groups)[number]) => (g.direct ? g.name : `${g.name} (through ${g.through.join(', ')})`);
        emit(io, wantsJson(c), { ...view, groups }, () => showAccount(view, groups.map(named).join(', ')));
      }),
    );

  addPasswordOptions(
    user
      .command('create')
      .description('create an account (the first account becomes the administrator)')
      .requiredOption('--email <email>', 'email')
      .option('--name <name>', 'display name (default: the part of the email before @)')
      .option('--allow-lookalike', 'create it even when its address looks like another account’s (letters a reader cannot tell apart)'),
  ).action(async (opts: PasswordFlags & { email: string; name?: string; allowLookalike?: boolean }, c: Command) => {
    const password = await readPassword(opts, io);
    await withCore(c, io, async (core) => {
      const view = await core.accounts.create(core.shell, { email: opts.email, name: opts.name, password, allowLookalike: opts.allowLookalike === true });
      emit(io, wantsJson(c), { account: view }, () => showAccount(view));
    });
  });

  addPasswordOptions(user.command('set-password <email>').description('set a new password; ends every session')).action(
    async (email: string, opts: PasswordFlags, c: Command) => {
      const password = await readPassword(opts, io);
      await withCore(c, io, async (core) => {
        const account = await core.accounts.setPassword(core.shell, email, password);
        done(io, c, account, true, 'password set; earlier sessions are signed out');
      });
    },
  );

  user
    .command('revoke-sessions <email>')
    .description('invalidate every token issued so far')
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => done(io, c, await core.accounts.revokeSessions(core.shell, email), true, 'every earlier session is signed out')),
    );

  user
    .command('recovery-link <email>')
    .description(
      'print a one-time link that opens the account page for 15 minutes, to add a passkey or a password (the person is told by mail when it is used)',
    )
    .option('--expires <duration>', 'how long the link works (1m to 7d)', '24h')
    .action(async (email: string, o: { expires: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.accounts.recoveryLink(core.shell, email, parseDuration(o.expires, '--expires'));
        emit(io, wantsJson(c), r, () => `${r.link}\n(works once, until ${r.expires_at}; give it to the person by a way you trust)`);
      }),
    );

  user
    .command('set-username <email> <username>')
    .description('a new username: 1 to 128 of a-z 0-9 . _ + - and one @ (the LDAP uid and OIDC preferred_username)')
    .action(async (email: string, username: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.accounts.setUsername(core.shell, email, username);
        done(io, c, r.account, r.changed, r.changed ? `username is now ${r.account.username}` : `already ${r.account.username}; nothing changed`);
      }),
    );

  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    user
      .command(`${name} <email>`)
      .description(disabled ? 'refuse signin and end every session' : 'allow signin again')
      .action(async (email: string, _o, c: Command) =>
        withCore(c, io, async (core) => {
          const r = await core.accounts.setDisabled(core.shell, email, disabled);
          done(io, c, r.account, r.changed, r.changed ? `${name}d` : `already ${name}d; nothing changed`);
        }),
      );
  }

  user
    .command('sessions <email>')
    .description("the account's open sessions, newest first")
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.accounts.sessions(core.shell, email);
        emit(io, wantsJson(c), { account: { reference_id: r.account.reference_id, email: r.account.email }, sessions: r.sessions }, () =>
          table([
            ['ID', 'CREATED', 'LAST USED', 'CLIENT', 'USER AGENT'],
            ...r.sessions.map((x) => [x.id, x.created_at, x.last_used_at, x.client ?? '-', (x.user_agent ?? '-').slice(0, 60)]),
          ]),
        );
      }),
    );

  user
    .command('revoke-session <email> <id>')
    .description('end one session: its tokens are refused on the next request')
    .action(async (email: string, id: string, _o, c: Command) =>
      withCore(c, io, async (core) => done(io, c, await core.accounts.revokeSession(core.shell, email, id), true, `session ${id} is signed out`)),
    );

  user
    .command('delete <email>')
    .description('delete the account and everything hanging off it (never the last administrator)')
    .option('--yes', 'really delete it (nothing is deleted without it)')
    .option('--force', 'also an account a directory source or a SCIM client manages (it may come back at its next sync)')
    .action(async (email: string, opts: { yes?: boolean; force?: boolean }, c: Command) => {
      if (opts.yes !== true) throw new AppError('invalid_input', `deleting ${email} cannot be undone: run it again with --yes`);
      await withCore(c, io, async (core) => {
        const gone = await core.accounts.delete(core.shell, email, { force: opts.force === true });
        emit(io, wantsJson(c), { account: gone, deleted: true }, () => `${gone.email}: deleted (id ${gone.reference_id})\n`);
      });
    });

  registerInvitations(user, io);
  registerAppPasswords(user, io);
  registerSshKeys(user, io);
  registerApiKeys(user, io);

  user
    .command('passkeys <email>')
    .description("the account's passkeys (name, created, last used)")
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const passkeys = await core.passkeys.list(core.shell, email);
        emit(io, wantsJson(c), { email, passkeys }, () =>
          passkeys.length === 0
            ? `${email} has no passkeys\n`
            : table([
                ['ID', 'NAME', 'CREATED', 'LAST USED', 'SYNCED'],
                ...passkeys.map((p) => [p.id, p.name, p.created_at, p.last_used_at ?? 'never', yes(p.backed_up)]),
              ]),
        );
      }),
    );

  user
    .command('passkey-remove <email> <id>')
    .description("remove one of the account's passkeys (never the only way in of an account without a password)")
    .action(async (email: string, id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const removed = await core.passkeys.remove(core.shell, email, id);
        emit(io, wantsJson(c), { email, removed }, () => `${email}: passkey ${removed.name} (${removed.id}) removed\n`);
      }),
    );

  user
    .command('unlock <email>')
    .description('clear failed-signin and TOTP lockouts')
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.accounts.unlock(core.shell, email);
        done(io, c, r.account, r.unlocked, r.unlocked ? 'failure counts and lockouts cleared' : 'no failures counted; nothing changed');
      }),
    );

  // State changes by email that answer { account, changed }: one shape, so one registration.
  const changes = [
    ['promote', 'make the account an administrator (several are normal)', 'is now an administrator', 'already an administrator; nothing changed'],
    [
      'demote',
      "end the account's administration (never the last administrator's)",
      'is no longer an administrator',
      'was not an administrator; nothing changed',
    ],
    [
      'totp-reset',
      'turn the second factor off (the account can enrol again)',
      'TOTP turned off; earlier sessions are signed out',
      'TOTP was not on; nothing changed',
    ],
  ] as const;
  const use = { promote: 'promote', demote: 'demote', 'totp-reset': 'resetTotp' } as const;
  for (const [name, description, changedText, unchangedText] of changes) {
    user
      .command(`${name} <email>`)
      .description(description)
      .action(async (email: string, _o, c: Command) =>
        withCore(c, io, async (core) => {
          const r = await core.accounts[use[name]](core.shell, email);
          done(io, c, r.account, r.changed, r.changed ? changedText : unchangedText);
        }),
      );
  }
}

const yes = (b: boolean) => (b ? 'yes' : 'no');
