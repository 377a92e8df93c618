/** `gatehouse client add | list | show | remove | rotate-secret`: relying parties of the OpenID Connect provider. */
import type { Command } from 'commander';
import type { ClientView } from '../core';
import { AppError } from '../errors';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];

/** The grants as the flags that gave them. */
const GRANT_WORDS: Record<ClientView['grants'][number], string> = {
  authorization_code: 'authorization code',
  device_code: 'device',
  client_credentials: 'client credentials',
};
/** on/off as the shell says it; anything else is a clear error. */
function onOff(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new AppError('invalid_input', `{--two-factor} must be on or off, got ${value.slice(0, 20)}`);
}

/** A comma-separated list (groups,email); '' names none. */
const commaList = (value: string | undefined) => (value === undefined ? undefined : value.split(',').filter((v) => v.trim() !== ''));

const grantsText = (c: ClientView) => c.grants.map((g) => GRANT_WORDS[g]).join(', ');

const showClient = (c: ClientView & { client_secret?: string }) =>
  keyValues([
    ['client_id', c.client_id],
    ...(c.client_secret ? ([['client_secret', `${c.client_secret}   (shown once: store it now)`]] as Array<[string, string]>) : []),
    ['name', c.name],
    ['type', c.public ? 'public (no secret)' : 'confidential (client_secret_basic)'],
    ['grants', grantsText(c)],
    ...(c.audience === null ? [] : ([['audience', c.audience]] as Array<[string, string]>)),
    ['first party', c.first_party],
    ['redirect URIs', c.redirect_uris.join(' ') || null],
    ['post-logout URIs', c.post_logout_redirect_uris.join(' ') || null],
    ['allowed groups', c.allowed_groups.join(', ') || 'everyone'],
    ['two factors', c.two_factor ? 'required' : 'no'],
    ['back-channel logout', c.backchannel_logout_uri],
    ['ID token claims', c.id_token_claims.join(', ') || 'none (userinfo has them)'],
    ['created', c.created_at],
  ]);

export function registerClient(program: Command, io: Io): void {
  const client = program.command('client').description('applications that sign in with Gatehouse (OpenID Connect)');

  client
    .command('add')
    .description('register an application; prints its client_id (and, unless --public, its secret, once)')
    .requiredOption('--name <name>', 'what people see on the consent page')
    .option('--redirect-uri <uri>', 'a browser sign-in: where the application receives the code (repeatable; https, or http on localhost)', collect)
    .option('--device', 'the device flow: a TV or command line shows a code, the person confirms it at /device')
    .option('--credentials', 'client credentials: the application acts as itself (machine to machine; needs a secret)')
    .option('--audience <uri>', 'with --credentials: the resource server its tokens are for (their aud; default: urn:gatehouse:client:<client_id>)')
    .option('--public', 'a browser, native or device app without a secret (PKCE required for browser sign-ins)')
    .option('--first-party', 'your own application: no consent page')
    .option('--allowed-group <group>', 'only members of this group may sign in (repeatable)', collect)
    .option('--post-logout-redirect-uri <uri>', 'where to return after signing out (repeatable)', collect)
    .option('--two-factor', 'sign-ins need a second factor: a one-factor session is asked for it first')
    .option('--backchannel-logout-uri <uri>', "where Gatehouse tells the application that a person's session ended (OpenID Connect Back-Channel Logout)")
    .option(
      '--id-token-claims <claims>',
      'claims its ID tokens carry as well as userinfo, comma-separated: email, email_verified, name, preferred_username, groups (each when its scope is granted)',
    )
    .action(
      async (
        opts: {
          name: string;
          redirectUri?: string[];
          device?: boolean;
          credentials?: boolean;
          audience?: string;
          public?: boolean;
          firstParty?: boolean;
          allowedGroup?: string[];
          postLogoutRedirectUri?: string[];
          twoFactor?: boolean;
          backchannelLogoutUri?: string;
          idTokenClaims?: string;
        },
        c: Command,
      ) =>
        withCore(c, io, async (core) => {
          const added = await core.clients.add(core.shell, {
            name: opts.name,
            redirectUris: opts.redirectUri ?? [],
            device: opts.device,
            credentials: opts.credentials,
            audience: opts.audience,
            public: opts.public,
            firstParty: opts.firstParty,
            allowedGroups: opts.allowedGroup,
            postLogoutRedirectUris: opts.postLogoutRedirectUri,
            twoFactor: opts.twoFactor,
            backchannelLogoutUri: opts.backchannelLogoutUri,
            idTokenClaims: commaList(opts.idTokenClaims),
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
            ['CLIENT_ID', 'NAME', 'TYPE', 'GRANTS', 'FIRST PARTY', 'ALLOWED GROUPS'],
            ...clients.map((x) => [
              x.client_id,
              x.name,
              x.public ? 'public' : 'confidential',
              grantsText(x),
              x.first_party ? 'yes' : 'no',
              x.allowed_groups.join(',') || '-',
            ]),
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
    .command('set <client_id>')
    .description("change an application's second-factor rule, back-channel logout address or ID token claims")
    .option('--two-factor <on|off>', 'whether sign-ins need a second factor')
    .option('--backchannel-logout-uri <uri>', 'where session ends are told ("" for nowhere)')
    .option('--id-token-claims <claims>', 'the claims its ID tokens carry, comma-separated ("" for none: userinfo only)')
    .action(async (clientId: string, opts: { twoFactor?: string; backchannelLogoutUri?: string; idTokenClaims?: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.clients.change(core.shell, clientId, {
          twoFactor: onOff(opts.twoFactor),
          backchannelLogoutUri: opts.backchannelLogoutUri,
          idTokenClaims: commaList(opts.idTokenClaims),
        });
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
