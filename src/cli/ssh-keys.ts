/**
 * `gatehouse user ssh-key add <email> <file|-> | list <email> | remove <email> <id>` and
 * `gatehouse user set-shell <email> <shell>`: what Linux hosts read of an account through the
 * directory (docs/hosts.md).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../errors';
import type { SshKeyView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

/** More than a public key of any type taken (the core says why a long one is refused): read no further. */
const MAX_READ = 65536;

async function readKey(io: Io, from: string): Promise<string> {
  if (from === '-') {
    const text = await io.readStdin();
    if (text.length > MAX_READ)
      throw new AppError('invalid_input', `standard input holds ${text.length} characters: a public key is one line of a few hundred`);
    return text;
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(from);
  } catch {
    throw new AppError('invalid_input', `cannot read ${from}: no such file (give the .pub file, or - to read the key from standard input)`);
  }
  if (!stat.isFile()) throw new AppError('invalid_input', `${from} is not a file`);
  if (stat.size > MAX_READ)
    throw new AppError('invalid_input', `${from} is ${stat.size} bytes: a public key is one line of a few hundred (give the .pub file)`);
  return fs.readFileSync(from, 'utf8');
}

const show = (v: SshKeyView) =>
  keyValues([
    ['id', v.id],
    ['type', v.description],
    ['fingerprint', v.fingerprint],
    ['comment', v.comment || null],
    ['added', v.created_at],
  ]);

export function registerSshKeys(user: Command, io: Io): void {
  const group = user.command('ssh-key').description("an account's SSH public keys, served to Linux hosts by the directory (at most 20)");

  group
    .command('add <email> <file>')
    .description('add a public key from a .pub file, or - for standard input: ed25519, ECDSA, their sk- forms, or RSA of 2048 bits or more')
    .action(async (email: string, file: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const key = await readKey(io, file);
        const view = await core.accounts.ssh.add(core.shell, email, key);
        emit(io, wantsJson(c), { email, ssh_key: view }, () => `${show(view)}\nThe account's owner is told by mail.\n`);
      }),
    );

  group
    .command('list <email>')
    .description("the account's SSH public keys")
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.accounts.ssh.list(core.shell, email);
        emit(io, wantsJson(c), { email, ssh_keys: list }, () =>
          list.length === 0
            ? 'no SSH keys\n'
            : table([
                ['ID', 'TYPE', 'FINGERPRINT', 'COMMENT', 'ADDED'],
                ...list.map((v) => [v.id, v.description, v.fingerprint, v.comment || '-', v.created_at]),
              ]),
        );
      }),
    );

  group
    .command('remove <email> <id>')
    .description('remove one: hosts stop taking it at their next look-up')
    .action(async (email: string, id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.accounts.ssh.remove(core.shell, email, id);
        emit(io, wantsJson(c), { email, removed: view }, () => `removed ${view.id} (${view.description} ${view.fingerprint})\n`);
      }),
    );

  user
    .command('set-shell <email> <shell>')
    .description('the login shell Linux hosts give the account (an absolute path such as /usr/bin/zsh; default /bin/bash)')
    .action(async (email: string, shell: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.accounts.ssh.setShell(core.shell, email, shell);
        emit(io, wantsJson(c), { email, login_shell: r.shell, changed: r.changed }, () =>
          r.changed ? `login shell is now ${r.shell}\n` : `already ${r.shell}; nothing changed\n`,
        );
      }),
    );
}
