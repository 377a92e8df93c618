/** `gatehouse provider add | list | show | remove`: upstream OpenID Connect providers people can sign in with (contract section 14). */
import fs from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../errors';
import type { ProviderView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { envVariable } from './password-input';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];

const show = (p: ProviderView) =>
  keyValues([
    ['name', p.name],
    ['display name', p.display_name],
    ['issuer', p.issuer],
    ['client_id', p.client_id],
    ['scopes', ['openid', ...p.scopes].join(' ')],
    ['trust email', p.trust_email],
    ['redirect URI', `${p.redirect_uri}   (register this at the provider)`],
    ['linked identities', p.linked_identities],
    ['created', p.created_at],
  ]);

/** The client secret never comes as an argument value (process lists, shell history): a file or a variable. */
function readSecret(o: { clientSecretFile?: string; clientSecretEnv?: string }, io: Io): string {
  if ((o.clientSecretFile === undefined) === (o.clientSecretEnv === undefined)) {
    throw new AppError('invalid_input', 'give the client secret with exactly one of --client-secret-file F or --client-secret-env VAR');
  }
  if (o.clientSecretFile !== undefined) {
    try {
      return fs.readFileSync(o.clientSecretFile, 'utf8').replace(/\r?\n$/, '');
    } catch {
      throw new AppError('invalid_input', `cannot read the client secret file ${o.clientSecretFile}`);
    }
  }
  const value = envVariable(io, o.clientSecretEnv!);
  if (value === undefined) throw new AppError('invalid_input', `the environment variable ${o.clientSecretEnv} is not set`);
  return value;
}

export function registerProvider(program: Command, io: Io): void {
  const provider = program
    .command('provider')
    .description('other OpenID Connect providers people can sign in with (Google, GitLab, Keycloak, another Gatehouse)');

  provider
    .command('add')
    .description('add a provider; prints the redirect URI to register there')
    .requiredOption('--name <name>', 'a short name: lower-case letters, digits, dashes (it names the callback address)')
    .requiredOption('--issuer <url>', "the provider's issuer URL (its discovery document is read from there)")
    .requiredOption('--client-id <id>', 'the client id the provider gave Gatehouse')
    .option('--client-secret-file <file>', 'read the client secret from a file')
    .option('--client-secret-env <var>', 'read the client secret from an environment variable')
    .option('--scope <scope>', 'a scope to ask for besides openid (repeatable; default: email profile)', collect)
    .option('--display-name <text>', 'what the button says after "Continue with" (default: the name)')
    .option(
      '--trust-email',
      'link a new sign-in to the account with the same email when the provider says it verified it (only for providers you trust with that)',
    )
    .action(
      async (
        o: {
          name: string;
          issuer: string;
          clientId: string;
          clientSecretFile?: string;
          clientSecretEnv?: string;
          scope?: string[];
          displayName?: string;
          trustEmail?: boolean;
        },
        c: Command,
      ) =>
        withCore(c, io, async (core) => {
          const added = await core.providers.add(core.shell, {
            name: o.name,
            issuer: o.issuer,
            clientId: o.clientId,
            clientSecret: readSecret(o, io),
            scopes: o.scope,
            displayName: o.displayName,
            trustEmail: o.trustEmail === true,
          });
          emit(io, wantsJson(c), added, () => show(added));
        }),
    );

  provider
    .command('list')
    .description('every provider')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.providers.list(core.shell);
        emit(io, wantsJson(c), { providers: list }, () =>
          list.length === 0
            ? 'no providers\n'
            : table([
                ['NAME', 'DISPLAY NAME', 'ISSUER', 'TRUST EMAIL', 'LINKED'],
                ...list.map((p) => [p.name, p.display_name, p.issuer, p.trust_email ? 'yes' : 'no', String(p.linked_identities)]),
              ]),
        );
      }),
    );

  provider
    .command('show <name>')
    .description('one provider (never its secret)')
    .action(async (name: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const p = await core.providers.show(core.shell, name);
        emit(io, wantsJson(c), p, () => show(p));
      }),
    );

  provider
    .command('remove <name>')
    .description('remove a provider and the identities linked through it (accounts keep their other ways in)')
    .option('--force', 'even when some accounts sign in only through it (they then need a password reset link)')
    .action(async (name: string, o: { force?: boolean }, c: Command) =>
      withCore(c, io, async (core) => {
        const p = await core.providers.remove(core.shell, name, o.force === true);
        emit(io, wantsJson(c), { removed: p }, () => `provider ${p.name} removed (${p.linked_identities} linked identities with it)\n`);
      }),
    );
}
