/** `gatehouse saml sp add | list | show | remove` and `saml cert list | rotate | retire`: the SAML 2.0 identity provider. */
import fs from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../errors';
import { outboundUrl, shownUrl, type NameIdKind, type SamlCertView, type SamlSpView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];
const MAX_METADATA_BYTES = 256 * 1024;

/**
 * Whether `source` is an attempt at a URL (a scheme, or `://` anywhere): it is then judged as one
 * (and refused as one), never read as a file whose name the refusal would echo with whatever
 * password it holds. A file whose name has a colon is given as ./name.
 */
const looksLikeUrl = (source: string) => source.includes('://') || /^[a-z][a-z0-9+.-]*:/i.test(source);

/** SP metadata from a file, or from a URL (an SP's own metadata endpoint). */
async function readMetadata(given: string): Promise<string> {
  const source = given.trim();
  if (looksLikeUrl(source)) {
    // The rule of every address Gatehouse sends to: no user or password, nothing unseen inside.
    const url = outboundUrl(source, '{--metadata}', { example: 'https://app.example.com/saml/metadata' });
    // Said with its query values hidden (they are often keys), as webhooks are shown.
    const shown = shownUrl(url.href);
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'follow' });
    } catch (err) {
      throw new AppError('invalid_input', `could not fetch the metadata from ${shown}: ${(err as Error).message}`);
    }
    if (!res.ok) throw new AppError('invalid_input', `could not fetch the metadata from ${shown}: HTTP ${res.status}`);
    const text = await res.text();
    if (Buffer.byteLength(text) > MAX_METADATA_BYTES) throw new AppError('invalid_input', 'the metadata is larger than 256 KiB');
    return text;
  }
  try {
    if (fs.statSync(source).size > MAX_METADATA_BYTES) throw new AppError('invalid_input', 'the metadata is larger than 256 KiB');
    return fs.readFileSync(source, 'utf8');
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(
      'invalid_input',
      `cannot read the metadata file ${JSON.stringify(source.slice(0, 200))}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

const showSp = (sp: SamlSpView) =>
  keyValues([
    ['id', sp.id],
    ['name', sp.name],
    ['entity id', sp.entity_id],
    ['NameID', sp.nameid],
    ['ACS URLs', sp.acs_urls.join(' ')],
    ['logout URLs', sp.slo_urls.join(' ') || null],
    ['signed requests', sp.authn_requests_signed ? 'required (checked with its certificate)' : 'not required'],
    ['allowed groups', sp.allowed_groups.join(', ') || 'everyone'],
    ['two factors', sp.two_factor ? 'required (a single-factor sign-in is asked for its second factor)' : 'not required'],
    ['created', sp.created_at],
  ]);

const certTable = (certs: SamlCertView[]) =>
  table([
    ['KID', 'STATUS', 'SHA-256 FINGERPRINT', 'EXPIRES'],
    ...certs.map((c) => [c.kid, c.status === 'current' ? 'current (signs)' : 'next (listed)', c.fingerprint_sha256, c.not_after]),
  ]);

export function registerSaml(program: Command, io: Io): void {
  const saml = program.command('saml').description('the SAML 2.0 identity provider: service providers and the signing certificate');
  const sp = saml.command('sp').description('service providers (apps that sign in with SAML)');

  sp.command('add')
    .description("register an app from its metadata (or its entity id and ACS URL); Gatehouse's own metadata is at /saml/metadata")
    .option('--metadata <file-or-url>', "the SP's metadata XML: a file, or an http(s) URL")
    .option('--entity-id <id>', 'without metadata: the entity id the SP names itself with')
    .option('--acs-url <url>', 'without metadata: where the SP receives Responses (HTTP-POST)')
    .option('--name <name>', 'what people see (default: the entity id)')
    .option('--allowed-group <group>', 'only members of this group may sign in (repeatable)', collect)
    .option('--nameid <kind>', 'the NameID it gets: email, persistent (a pseudonym for this SP) or username', 'email')
    .option('--two-factor', 'every sign-in to it needs two factors (TOTP or a passkey); accounts without one are refused')
    .action(
      async (
        opts: { metadata?: string; entityId?: string; acsUrl?: string; name?: string; allowedGroup?: string[]; nameid: string; twoFactor?: boolean },
        c: Command,
      ) =>
        withCore(c, io, async (core) => {
          const metadata = opts.metadata === undefined ? undefined : await readMetadata(opts.metadata);
          const added = await core.saml.addSp(core.shell, {
            metadata,
            entityId: opts.entityId,
            acsUrl: opts.acsUrl,
            name: opts.name,
            nameid: opts.nameid as NameIdKind,
            allowedGroups: opts.allowedGroup,
            twoFactor: opts.twoFactor === true,
          });
          emit(io, wantsJson(c), added, () => showSp(added));
        }),
    );

  sp.command('list')
    .description('every registered service provider')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const sps = await core.saml.listSps(core.shell);
        emit(io, wantsJson(c), { service_providers: sps }, () =>
          table([
            ['ID', 'NAME', 'ENTITY ID', 'NAMEID', 'ALLOWED GROUPS', 'TWO FACTORS'],
            ...sps.map((x) => [x.id, x.name, x.entity_id, x.nameid, x.allowed_groups.join(',') || '-', x.two_factor ? 'yes' : 'no']),
          ]),
        );
      }),
    );

  sp.command('show <id-or-entity-id>')
    .description('one service provider')
    .action(async (id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.saml.showSp(core.shell, id);
        emit(io, wantsJson(c), view, () => showSp(view));
      }),
    );

  sp.command('set <id-or-entity-id>')
    .description('change whether sign-ins to a service provider need two factors')
    .requiredOption('--two-factor <on|off>', 'a one-factor session is asked for its second factor first (on), or not (off)')
    .action(async (id: string, o: { twoFactor: string }, c: Command) =>
      withCore(c, io, async (core) => {
        if (o.twoFactor !== 'on' && o.twoFactor !== 'off')
          throw new AppError('invalid_input', `{--two-factor} must be on or off, got ${o.twoFactor.slice(0, 20)}`);
        const view = await core.saml.setSpTwoFactor(core.shell, id, o.twoFactor === 'on');
        emit(io, wantsJson(c), view, () => showSp(view));
      }),
    );

  sp.command('remove <id-or-entity-id>')
    .description('unregister a service provider: it can no longer sign anyone in')
    .action(async (id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.saml.removeSp(core.shell, id);
        emit(io, wantsJson(c), { service_provider: { id: view.id, entity_id: view.entity_id }, removed: true }, () => `${view.name}: removed\n`);
      }),
    );

  const cert = saml.command('cert').description('the certificate Responses are signed with');
  cert
    .command('list')
    .description('the current certificate (made at first use) and the next one, if rotated')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const certs = await core.saml.listCerts(core.shell);
        emit(io, wantsJson(c), { certificates: certs }, () => certTable(certs));
      }),
    );
  cert
    .command('rotate')
    .description('add the next certificate: metadata lists it beside the current one until retire')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const certs = await core.saml.rotateCert(core.shell);
        emit(io, wantsJson(c), { certificates: certs }, () => certTable(certs));
      }),
    );
  cert
    .command('retire')
    .description('drop the current certificate: the next one signs from now on (update the SPs that pin it first)')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const certs = await core.saml.retireCert(core.shell);
        emit(io, wantsJson(c), { certificates: certs }, () => certTable(certs));
      }),
    );
}
