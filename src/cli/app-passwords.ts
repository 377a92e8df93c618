/**
 * `gatehouse user app-password add <email> --name N | list <email> | revoke <email> <id>`: an
 * account's passwords for apps that bind to the LDAP directory. The password is printed once.
 */
import type { Command } from 'commander';
import type { AppPasswordView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const show = (p: AppPasswordView) =>
  keyValues([
    ['id', p.id],
    ['name', p.name],
    ['created', p.created_at],
    ['last used', p.last_used_at],
  ]);

export function registerAppPasswords(user: Command, io: Io): void {
  const app = user.command('app-password').description("an account's passwords for apps that sign in over LDAP (one per app, revocable)");

  app
    .command('add <email>')
    .description('make one; it is printed once (an account with a second factor binds to LDAP only with these)')
    .requiredOption('--name <name>', 'which app it is for, as the lists show it')
    .action(async (email: string, o: { name: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.accounts.appPasswords.add(core.shell, email, o.name);
        emit(
          io,
          wantsJson(c),
          { app_password: r.appPassword, secret: r.secret },
          () => `${show(r.appPassword)}password:       ${r.secret}\n\nShown this once: enter it in the app now.\n`,
        );
      }),
    );

  app
    .command('list <email>')
    .description("the account's app passwords (never the passwords themselves)")
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.accounts.appPasswords.list(core.shell, email);
        emit(io, wantsJson(c), { email, app_passwords: list }, () =>
          list.length === 0
            ? 'no app passwords\n'
            : table([['ID', 'NAME', 'CREATED', 'LAST USED'], ...list.map((p) => [p.id, p.name, p.created_at, p.last_used_at ?? 'never'])]),
        );
      }),
    );

  app
    .command('revoke <email> <id>')
    .description('revoke one: the app it was for can no longer bind with it')
    .action(async (email: string, id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        await core.accounts.appPasswords.revoke(core.shell, email, id);
        emit(io, wantsJson(c), { email, revoked: id }, () => `revoked ${id}\n`);
      }),
    );
}
