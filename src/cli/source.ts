/**
 * `gatehouse source add ldap | list | show | sync | remove`: LDAP and Active Directory servers whose
 * people and groups Gatehouse syncs in (docs/moving-in.md). The bind password never comes as an
 * argument value: standard input, a file or an environment variable.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { AppError, reworded } from '../errors';
import type { SourceInput, SourceView, SyncReport } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';
import { readPassword } from './password-input';

/** The core writes a flag as {--name}; the shell shows it as typed. */
const flagWords = (text: string) => text.replace(/\{(--[\w-]+)\}/g, '$1');

const show = (v: SourceView) =>
  keyValues([
    ['name', v.name],
    ['url', `${v.url}${v.start_tls ? ' (StartTLS)' : ''}`],
    ['bind DN', v.bind_dn],
    ['base DN', v.base_dn],
    ['user filter', v.user_filter],
    ['group filter', v.group_filter],
    ['username attribute', v.uid_attribute],
    ['id attribute', v.id_attribute],
    ['sync every', v.every ?? 'on demand'],
    ['keep passwords', v.keep_passwords],
    ['people', `${v.people}${v.gone > 0 ? ` (and ${v.gone} gone from the directory, disabled)` : ''}`],
    ['groups', v.groups],
    ['last sync', v.last_sync_at === null ? 'never' : `${v.last_sync_at} ${v.last_status}`],
    ...(v.last_status === 'failed' ? [['error', String((v.last_result as { error?: string })?.error ?? '')] as [string, string]] : []),
    ['next sync', v.next_sync_at ?? '-'],
    ['created', v.created_at],
  ]);

function human(r: SyncReport): string {
  const lines = [
    `people: ${r.people.created} created, ${r.people.updated} updated, ${r.people.unchanged} unchanged, ${r.people.disabled} disabled (gone), ${r.people.enabled} back, ${r.people.skipped} skipped`,
    `groups: ${r.groups.created} created, ${r.groups.renamed} renamed, ${r.groups.removed} removed, ${r.groups.skipped} skipped`,
    `members: ${r.members.added} added, ${r.members.removed} removed; groups inside groups: ${r.nestings.added} added, ${r.nestings.removed} removed`,
  ];
  const skipped = r.skipped.length > 0 ? table([['SKIPPED', 'WHY'], ...r.skipped.map((s) => [s.dn, flagWords(s.reason)])]) : '';
  return skipped + lines.join('\n') + '\n';
}

function readCa(file: string | undefined): string | null {
  if (file === undefined) return null;
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new AppError('invalid_input', `cannot read the certificate file ${file}`);
  }
}

/**
 * The flags of `source add`: the core's SourceInput as the shell takes it, one flag per field
 * (commander names `--bind-dn` bindDn), except the two that never come as a value: the bind
 * password (from standard input, a file or the environment) and the CA certificate (from a file).
 */
type AddFlags = Omit<SourceInput, 'bindPassword' | 'caCertificate'> & {
  caFile?: string;
  bindPasswordStdin?: boolean;
  bindPasswordFile?: string;
  bindPasswordEnv?: string;
};

export function registerSource(program: Command, io: Io): void {
  const source = program.command('source').description('LDAP and Active Directory servers whose people and groups are synced in');

  source
    .command('add')
    .description('add a directory to sync from (its address and bind are checked now)')
    .argument('<kind>', 'ldap (OpenLDAP, Active Directory and other LDAP servers)')
    .requiredOption('--name <name>', 'a short name: lower-case letters, digits, dashes')
    .requiredOption('--url <url>', 'ldaps://host[:port], or ldap://host[:port] with --start-tls')
    .option('--start-tls', 'upgrade an ldap:// connection with StartTLS')
    .option('--ca-file <file>', "the certificate authority (PEM) the directory's certificate must chain to (default: the system's)")
    .requiredOption('--bind-dn <dn>', 'the DN Gatehouse binds as to read people and groups')
    .option('--bind-password-stdin', 'read its password from standard input')
    .option('--bind-password-file <file>', 'read its password from a file')
    .option('--bind-password-env <var>', 'read its password from an environment variable')
    .requiredOption('--base-dn <dn>', 'where people and groups are searched')
    .option('--user-filter <filter>', 'which entries are people (default: (objectClass=inetOrgPerson); for Active Directory, users)')
    .option('--group-filter <filter>', 'which entries are groups (default: groupOfNames and groupOfUniqueNames; for Active Directory, group)')
    .option('--uid-attribute <attribute>', 'the attribute that becomes the username: uid or sAMAccountName', 'uid')
    .option('--id-attribute <attribute>', 'the stable id: entryUUID or objectGUID (default: objectGUID with sAMAccountName, else entryUUID)')
    .option('--every <period>', 'sync on a schedule while the server runs: 15m, 1h, 1d (default: only with `source sync`)')
    .option('--keep-passwords', "keep Gatehouse's own hash of a password the directory accepted, so the directory can be retired later")
    .action(async (kind: string, o: AddFlags, c: Command) => {
      if (kind !== 'ldap') throw new AppError('invalid_input', `unknown source kind ${kind.slice(0, 20)} (ldap is known)`);
      const { caFile, bindPasswordStdin, bindPasswordFile, bindPasswordEnv, ...input } = o;
      const bindPassword = await readPassword({ passwordStdin: bindPasswordStdin, passwordFile: bindPasswordFile, passwordEnv: bindPasswordEnv }, io).catch(
        (err: unknown) => {
          throw err instanceof AppError
            ? reworded(err, err.message.replace(/--password-/g, '--bind-password-').replace('the password', 'the bind password'))
            : err;
        },
      );
      await withCore(c, io, async (core) => {
        const added = await core.sources.add(core.shell, {
          ...input,
          startTls: input.startTls === true,
          keepPasswords: input.keepPasswords === true,
          caCertificate: readCa(caFile),
          bindPassword,
        });
        emit(io, wantsJson(c), added, () => show(added) + `\nnext: gatehouse source sync ${added.name}\n`);
      });
    });

  source
    .command('list')
    .description('every source, with its last sync')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.sources.list(core.shell);
        emit(io, wantsJson(c), { sources: list }, () =>
          list.length === 0
            ? 'no sources\n'
            : table([
                ['NAME', 'URL', 'PEOPLE', 'GROUPS', 'EVERY', 'LAST SYNC'],
                ...list.map((v) => [
                  v.name,
                  v.url,
                  String(v.people),
                  String(v.groups),
                  v.every ?? '-',
                  v.last_sync_at ? `${v.last_sync_at} ${v.last_status}` : 'never',
                ]),
              ]),
        );
      }),
    );

  source
    .command('show <name>')
    .description('one source (never its bind password)')
    .action(async (name: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const v = await core.sources.show(core.shell, name);
        emit(io, wantsJson(c), v, () => show(v));
      }),
    );

  source
    .command('sync <name>')
    .description('sync now: people and groups made or brought up to date, people gone from the directory disabled, groups gone removed')
    .option('--allow-departures', 'even when more than a quarter of its people or groups are gone from the answer (a sync refuses that otherwise)')
    .action(async (name: string, o: { allowDepartures?: boolean }, c: Command) =>
      withCore(c, io, async (core) => {
        const report = await core.sources.sync(core.shell, name, o.allowDepartures === true);
        emit(io, wantsJson(c), report, () => human(report));
      }),
    );

  source
    .command('remove <name>')
    .description('stop syncing: the people and groups it brought stay, as accounts and groups of this server')
    .action(async (name: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const v = await core.sources.remove(core.shell, name);
        emit(io, wantsJson(c), { removed: v.name }, () => `removed the source ${v.name}; its ${v.people + v.gone} people and ${v.groups} groups stay\n`);
      }),
    );
}
