/** `gatehouse provider add | list | show | remove`: other providers people can sign in with: OpenID Connect, GitHub, OAuth 2.0 (contract sections 14 and 26). */
import fs from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../errors';
import type { NewProvider, ProviderView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { envVariable } from './password-input';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];

/** The settings of a GitHub or OAuth 2.0 provider, as lines. */
function kindLines(p: ProviderView): Array<[string, string | number | boolean]> {
  const x = p.settings as Record<string, unknown>;
  if (p.kind === 'github') {
    const teams = (x.team_groups as Array<{ org: string; team: string; group: string }>).map((t) => `${t.org}/${t.team}=${t.group}`);
    return [
      ['url', p.issuer],
      ['api url', String(x.api_url)],
      ['allowed org', (x.allowed_org as string | null) ?? '(any)'],
      ['team groups', teams.length === 0 ? '(none)' : teams.join(', ')],
    ];
  }
  if (p.kind === 'oauth2') {
    return [
      ['authorization url', String(x.authorization_url)],
      ['token url', String(x.token_url)],
      ['userinfo url', String(x.userinfo_url)],
      [
        'fields',
        `id=${String(x.id_field)} email=${String(x.email_field)} name=${String(x.name_field ?? '-')}${x.email_verified_field ? ` email_verified=${String(x.email_verified_field)}` : ''}`,
      ],
    ];
  }
  return [['issuer', p.issuer]];
}

const show = (p: ProviderView) =>
  keyValues([
    ['name', p.name],
    ['kind', p.kind],
    ['display name', p.display_name],
    ...kindLines(p),
    ['client_id', p.client_id],
    ['scopes', (p.kind === 'oidc' ? ['openid', ...p.scopes] : p.scopes).join(' ') || '(none)'],
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
    .description('other providers people can sign in with: OpenID Connect (Google, GitLab, Keycloak, another Gatehouse), GitHub, OAuth 2.0');

  provider
    .command('add')
    .description('add a provider; prints the redirect URI to register there')
    .option('--kind <kind>', 'oidc (OpenID Connect with discovery), github, or oauth2 (plain OAuth 2.0 with a user-info endpoint)', 'oidc')
    .requiredOption('--name <name>', 'a short name: lower-case letters, digits, dashes (it names the callback address)')
    .option('--issuer <url>', "oidc: the provider's issuer URL (its discovery document is read from there)")
    .requiredOption('--client-id <id>', 'the client id the provider gave Gatehouse')
    .option('--client-secret-file <file>', 'read the client secret from a file')
    .option('--client-secret-env <var>', 'read the client secret from an environment variable')
    .option(
      '--scope <scope>',
      'a scope to ask for (repeatable; oidc: besides openid, default email profile; github: default read:user user:email, and read:org with --allowed-org or --team-group; oauth2: none)',
      collect,
    )
    .option('--url <url>', 'github: the web address of GitHub Enterprise Server (default https://github.com)')
    .option('--api-url <url>', "github: its API's address (default https://api.github.com; for GitHub Enterprise Server, URL/api/v3)")
    .option('--allowed-org <org>', 'github: only members of this organization sign in')
    .option('--team-group <org/team=group>', "github: keep a team's members in a managed group, at each sign-in (repeatable)", collect)
    .option('--authorization-url <url>', "oauth2: the provider's authorization endpoint")
    .option('--token-url <url>', "oauth2: the provider's token endpoint")
    .option('--userinfo-url <url>', 'oauth2: the address that answers, with the access token, who signed in (JSON)')
    .option('--id-field <field>', "oauth2: the user-info field with the person's lasting id (default id; data.id for a field inside an object)")
    .option('--email-field <field>', 'oauth2: the user-info field with the email address (default email)')
    .option('--email-verified-field <field>', 'oauth2: a user-info field that is true when the provider verified the address (default: none, never verified)')
    .option('--name-field <field>', 'oauth2: the user-info field with the name (default name)')
    .option('--display-name <text>', 'what the button says after "Continue with" (default: the name)')
    .option(
      '--trust-email',
      'link a new sign-in to the account with the same email when the provider says it verified it (only for providers you trust with that)',
    )
    .action(
      async (
        // The flags are the provider's fields, less those read from elsewhere or named per flag.
        o: Omit<NewProvider, 'kind' | 'clientSecret' | 'scopes' | 'teamGroups'> & {
          kind: string;
          clientSecretFile?: string;
          clientSecretEnv?: string;
          scope?: string[];
          teamGroup?: string[];
        },
        c: Command,
      ) =>
        withCore(c, io, async (core) => {
          if (o.kind !== 'oidc' && o.kind !== 'github' && o.kind !== 'oauth2') throw new AppError('invalid_input', '--kind is oidc, github or oauth2');
          const added = await core.providers.add(core.shell, {
            kind: o.kind,
            name: o.name,
            issuer: o.issuer,
            clientId: o.clientId,
            clientSecret: readSecret(o, io),
            scopes: o.scope,
            displayName: o.displayName,
            trustEmail: o.trustEmail === true,
            url: o.url,
            apiUrl: o.apiUrl,
            allowedOrg: o.allowedOrg,
            teamGroups: o.teamGroup,
            authorizationUrl: o.authorizationUrl,
            tokenUrl: o.tokenUrl,
            userinfoUrl: o.userinfoUrl,
            idField: o.idField,
            emailField: o.emailField,
            emailVerifiedField: o.emailVerifiedField,
            nameField: o.nameField,
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
                ['NAME', 'KIND', 'DISPLAY NAME', 'ISSUER', 'TRUST EMAIL', 'LINKED'],
                ...list.map((p) => [p.name, p.kind, p.display_name, p.issuer, p.trust_email ? 'yes' : 'no', String(p.linked_identities)]),
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
