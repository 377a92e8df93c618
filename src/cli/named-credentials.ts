/**
 * `gatehouse user <kind> add <email> --name N … | list <email> | revoke <email> <id>`: the shell's
 * side of an account's named secrets (app passwords, API keys), one shape for each kind. The
 * secret is printed once.
 */
import type { Command } from 'commander';
import type { Core } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

interface Listed {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

interface Operations<View, Input> {
  add(actor: Core['shell'], email: string, input: Input): Promise<{ view: View; secret: string }>;
  list(actor: Core['shell'], email: string): Promise<View[]>;
  revoke(actor: Core['shell'], email: string, id: string): Promise<void>;
}

export interface CredentialCommands<View extends Listed, Input> {
  /** The subcommand: `app-password`, `api-key`. */
  command: string;
  description: string;
  /** In words, plural: "app passwords". */
  plural: string;
  /** The JSON keys: `app_password` / `app_passwords`. */
  jsonKey: string;
  /** The secret's label and JSON key ("password"/"secret", "key"/"key"), and what to do with it. */
  secret: { label: string; json: string; advice: string };
  addDescription: string;
  nameHelp: string;
  revokeDescription: string;
  /** More options of `add` (--expires), and the input they make with the name. */
  addOptions?: (command: Command) => Command;
  input: (name: string, options: Record<string, string | undefined>) => Input;
  operations: (core: Core) => Operations<View, Input>;
  /** Columns beyond id and name, before last use. */
  more?: Array<[string, (v: View) => string]>;
}

export function registerCredentialCommands<View extends Listed, Input>(user: Command, io: Io, spec: CredentialCommands<View, Input>): void {
  const more = spec.more ?? [];
  const show = (v: View) =>
    keyValues([
      ['id', v.id],
      ['name', v.name],
      ['created', v.created_at],
      ...more.map(([h, f]) => [h.toLowerCase(), f(v)] as [string, string]),
      ['last used', v.last_used_at],
    ]);
  const group = user.command(spec.command).description(spec.description);

  const add = group.command('add <email>').description(spec.addDescription).requiredOption('--name <name>', spec.nameHelp);
  (spec.addOptions ? spec.addOptions(add) : add).action(async (email: string, o: Record<string, string | undefined> & { name: string }, c: Command) =>
    withCore(c, io, async (core) => {
      const r = await spec.operations(core).add(core.shell, email, spec.input(o.name, o));
      emit(
        io,
        wantsJson(c),
        { [spec.jsonKey]: r.view, [spec.secret.json]: r.secret },
        () => `${show(r.view)}${`${spec.secret.label}:`.padEnd(16)}${r.secret}\n\n${spec.secret.advice}\n`,
      );
    }),
  );

  group
    .command('list <email>')
    .description(`the account's ${spec.plural} (never the secrets themselves)`)
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await spec.operations(core).list(core.shell, email);
        emit(io, wantsJson(c), { email, [`${spec.jsonKey}s`]: list }, () =>
          list.length === 0
            ? `no ${spec.plural}\n`
            : table([
                ['ID', 'NAME', 'CREATED', ...more.map(([h]) => h.toUpperCase()), 'LAST USED'],
                ...list.map((v) => [v.id, v.name, v.created_at, ...more.map(([, f]) => f(v)), v.last_used_at ?? 'never']),
              ]),
        );
      }),
    );

  group
    .command('revoke <email> <id>')
    .description(spec.revokeDescription)
    .action(async (email: string, id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        await spec.operations(core).revoke(core.shell, email, id);
        emit(io, wantsJson(c), { email, revoked: id }, () => `revoked ${id}\n`);
      }),
    );
}
