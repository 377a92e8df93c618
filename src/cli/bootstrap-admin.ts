/** `gatehouse bootstrap-admin --email E [--name N] (--password-stdin | --password-file F | --password-env VAR)` */
import type { Command } from 'commander';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit } from './output';
import { addPasswordOptions, PasswordFlags, readPassword } from './password-input';

export function registerBootstrapAdmin(program: Command, io: Io): void {
  const cmd = program
    .command('bootstrap-admin')
    .description('create (or promote) the first administrator and close guest signup')
    .requiredOption('--email <email>', 'the administrator email')
    .option('--name <name>', 'display name (default: the part of the email before @)');
  addPasswordOptions(cmd).action(async (opts: PasswordFlags & { email: string; name?: string }, c: Command) => {
    const password = await readPassword(opts, io);
    await withCore(
      c,
      io,
      async (core) => {
        const result = await core.accounts.bootstrapAdmin(core.shell, { email: opts.email, name: opts.name, password });
        const signup = await core.signupStatus();
        emit(
          io,
          wantsJson(c),
          { outcome: result.outcome, account: { reference_id: result.referenceId, email: opts.email.trim() }, signup_open: signup.open },
          () => {
            const what = {
              created: 'created the administrator',
              promoted: 'made the existing account an administrator',
              unchanged: 'already the administrator; nothing changed',
            }[result.outcome];
            return `${opts.email.trim()}: ${what}\nguest signup: ${signup.open ? 'open' : 'closed'}\n`;
          },
        );
      },
      { createsStore: true },
    );
  });
}
