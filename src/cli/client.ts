/** `gatehouse client add | list | show | remove | rotate-secret`: relying parties of the OpenID Connect provider. */
import type { Command } from 'commander';
import type { ClientView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];

const showClient = (c: ClientView & { client_secret?: string }) =>
  keyValues([
    ['client_id', c.client_id],
    ...(c.client_secret ? ([['client_secret', `${c.client_secret}   (shown once: store it now)`]] as Array<[string, string]>) : []),
    ['name', c.name],
    ['type', c.public ? 'public (PKCE, no secret)' : 'confidential (client_secret_basic)'],
    ['first party', c.first_party],
    ['redirect URIs', c.redirect_uris.join(' ')],
    ['post-logout URIs', c.post_logout_redirect_uris.join(' ') || null],
    ['allowed groups', c.allowed_groups.join(', ') || 'everyone'],
    ['created', c.created_at],
  ]);

export function registerClient(program: Command, io: Io): void {
  const client = program.command('client').description('applications that sign in with Gatehouse (OpenID Connect)');

  client
    .command('add')
    .description('register an application; prints its client_id (and, unless --public, its secret, once)')
    .requiredOption('--name <name>', 'what people see on the consent page')
    .requiredOption('--redirect-uri <uri>', 'where the application receives the code (repeatable; https, or http on localhost)', collect)
    .option('--public', 'a browser or native app without a secret (PKCE required)')
    .option('--first-party', 'your own application: no consent page')
    .option('--allowed-group <group>', 'only members of this group may sign in (repeatable)', collect)
    .option('--post-logout-redirect-uri <uri>', 'where to return after signing out (repeatable)', collect)
    .action(
      async (
        opts: { name: string; redirectUri: string[]; public?: boolean; firstParty?: boolean; allowedGroup?: string[]; postLogoutRedirectUri?: string[] },
        c: Command,
      ) =>
        withCore(c, io, async (core) => {
          const added = await core.clients.add(core.shell, {
            name: opts.name,
            redirectUris: opts.redirectUri,
            public: opts.public,
            firstParty: opts.firstParty,
            allowedGroups: opts.allowedGroup,
            postLogoutRedirectUris: opts.postLogoutRedirectUri,
          });
          emit(io, wantsJson(c), added, () => showClient(added));
        }),
    );

  client
    .command('list')
    .description('every registered application')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const clients = await core.clients.list(core.shell);
        emit(io, wantsJson(c), { clients }, () =>
          table([
            ['CLIENT_ID', 'NAME', 'TYPE', 'FIRST PARTY', 'ALLOWED GROUPS'],
            ...clients.map((x) => [x.client_id, x.name, x.public ? 'public' : 'confidential', x.first_party ? 'yes' : 'no', x.allowed_groups.join(',') || '-']),
          ]),
        );
      }),
    );

  client
    .command('show <client_id>')
    .description('one application')
    .action(async (clientId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.clients.show(core.shell, clientId);
        emit(io, wantsJson(c), view, () => showClient(view));
      }),
    );

  client
    .command('remove <client_id>')
    .description('unregister an application: it can no longer sign anyone in')
    .action(async (clientId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.clients.remove(core.shell, clientId);
        emit(io, wantsJson(c), { client: { client_id: view.client_id, name: view.name }, removed: true }, () => `${view.name}: removed\n`);
      }),
    );

  client
    .command('rotate-secret <client_id>')
    .description('a new secret for a confidential application (the old one stops working)')
    .action(async (clientId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.clients.rotateSecret(core.shell, clientId);
        emit(io, wantsJson(c), r, () => `client_secret: ${r.client_secret}   (shown once: store it now)\n`);
      }),
    );
}
