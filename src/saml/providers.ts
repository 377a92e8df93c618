/**
 * SAML service providers, registered beside OIDC clients: from their metadata (a file, a URL or
 * pasted text) or by hand (entity id and ACS URL). Everything a sign-in trusts comes from here:
 * the ACS URLs a Response may go to, the certificate that checks a signed request, the NameID
 * format, the gate (the same allowed groups an OIDC client has), and whether its sign-ins need
 * two factors.
 */
import { X509Certificate } from 'node:crypto';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { newShellSafeId } from '../auth/ids';
import { resolveGateGroup } from '../groups/manage';
import { findGroupsByReference } from '../store/groups';
import { unlessManaged } from '../managed/managed-by';
import type { Tx } from '../store/connection';
import { deleteSamlSp, findSamlSp, insertSamlSp, listSamlSps, type SamlSpRow, setSamlSpTwoFactor } from '../store/saml';
import { browserUrl, withoutUserinfo } from '../runtime/targets';
import { children, MAX_METADATA, NS, parseChecked, type XmlElement } from './xml';

export const BINDING = {
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
} as const;

export const NAMEID_FORMATS = {
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  username: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
} as const;
export type NameIdKind = keyof typeof NAMEID_FORMATS;

export interface AcsEndpoint {
  binding: string;
  location: string;
  index: number | null;
  is_default: boolean;
}

export interface SloEndpoint {
  binding: string;
  location: string;
  /** Where responses go, when it differs from location. */
  response_location?: string;
}

export interface NewSamlSp {
  /** Metadata XML (the shell reads the file or URL; the console pastes it). */
  metadata?: string;
  entityId?: string;
  acsUrl?: string;
  name?: string;
  nameid?: NameIdKind;
  allowedGroups?: readonly string[];
  /** Every sign-in to it needs two factors. */
  twoFactor?: boolean;
}

export interface SamlSpView {
  id: string;
  entity_id: string;
  name: string;
  nameid: NameIdKind;
  /** ACS URLs of the HTTP-POST binding: the only places a Response is sent. */
  acs_urls: string[];
  slo_urls: string[];
  authn_requests_signed: boolean;
  has_certificate: boolean;
  allowed_groups: string[];
  allowed_group_ids: string[];
  /** A single-factor session is asked for its second factor before this app is answered. */
  two_factor: boolean;
  created_at: string;
}

/** A registered SP as the sign-in reads it. */
export interface SamlSp {
  id: string;
  entityId: string;
  name: string;
  acs: AcsEndpoint[];
  slo: SloEndpoint[];
  /** Base64 DER of its signing certificate, or null. */
  certificate: string | null;
  authnRequestsSigned: boolean;
  nameid: NameIdKind;
  allowedGroups: string[];
  twoFactor: boolean;
}

export const spOf = (row: SamlSpRow): SamlSp => ({
  id: row.id,
  entityId: row.entity_id,
  name: row.name,
  acs: JSON.parse(row.acs) as AcsEndpoint[],
  slo: JSON.parse(row.slo) as SloEndpoint[],
  certificate: row.certificate,
  authnRequestsSigned: row.authn_requests_signed,
  nameid: row.nameid as NameIdKind,
  allowedGroups: JSON.parse(row.allowed_groups) as string[],
  twoFactor: row.two_factor,
});

const refuse = (why: string) => new AppError('invalid_input', why);

/**
 * An endpoint URL (where the browser takes a Response or a LogoutResponse): the rule of every
 * address Gatehouse sends a browser to (browserUrl: https, http only on a loopback host or while
 * Gatehouse itself is served over http, a lab; no user or password in any spelling, nothing
 * unseen inside), kept as written: a request's AssertionConsumerServiceURL is compared with it
 * exactly. No network rule: an app on an internal host is an ordinary SP.
 */
const endpointUrl = (raw: string, what: string, plainHttp = false): string =>
  browserUrl(raw, what, { plainHttp, example: 'https://app.example.com/saml/acs', proof: 'the signed Response proves where it comes from instead' });

function entityIdOf(raw: string): string {
  const id = raw.trim();
  if (id === '' || id.length > 1000 || /[\s<>"]/.test(id)) throw refuse('the entity id must be 1 to 1000 characters, with no spaces, quotes or angle brackets');
  return id;
}

const certificateOf = (text: string): string => {
  const b64 = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(b64) || b64.length < 100) throw refuse('the metadata has a signing certificate that is not base64 DER');
  return b64;
};

/** What a registration needs from SP metadata: entity id, endpoints, signing certificate, AuthnRequestsSigned. */
export async function readSpMetadata(
  xml: string,
  plainHttp = false,
): Promise<{
  entityId: string;
  acs: AcsEndpoint[];
  slo: SloEndpoint[];
  certificate: string | null;
  authnRequestsSigned: boolean;
  nameidFormats: string[];
}> {
  const root = await parseChecked(xml, [[NS.metadata, 'EntityDescriptor']], MAX_METADATA);
  const entityId = entityIdOf(root.getAttribute('entityID') ?? '');
  const sp = children(root, 'SPSSODescriptor', NS.metadata)[0];
  if (!sp) throw refuse('the metadata has no SPSSODescriptor: it does not describe a service provider');
  const acs: AcsEndpoint[] = children(sp, 'AssertionConsumerService', NS.metadata).map((e) => ({
    binding: e.getAttribute('Binding') ?? '',
    location: e.getAttribute('Location') ?? '',
    index: e.hasAttribute('index') ? Number(e.getAttribute('index')) : null,
    is_default: e.getAttribute('isDefault') === 'true',
  }));
  const postAcs = acs.filter((a) => a.binding === BINDING.post);
  if (postAcs.length === 0) throw refuse('the metadata lists no AssertionConsumerService for the HTTP-POST binding, the one Gatehouse answers with');
  for (const a of postAcs) endpointUrl(a.location, 'an AssertionConsumerService Location', plainHttp);
  const slo: SloEndpoint[] = children(sp, 'SingleLogoutService', NS.metadata)
    .filter((e) => e.getAttribute('Binding') === BINDING.redirect || e.getAttribute('Binding') === BINDING.post)
    .map((e) => ({
      binding: e.getAttribute('Binding')!,
      location: endpointUrl(e.getAttribute('Location') ?? '', 'a SingleLogoutService Location', plainHttp),
      ...(e.getAttribute('ResponseLocation')
        ? { response_location: endpointUrl(e.getAttribute('ResponseLocation')!, 'a SingleLogoutService ResponseLocation', plainHttp) }
        : {}),
    }));
  const signing = children(sp, 'KeyDescriptor', NS.metadata).filter((k) => (k.getAttribute('use') ?? 'signing') === 'signing');
  const certs = signing.flatMap((k: XmlElement) =>
    children(k, 'KeyInfo', NS.dsig)
      .flatMap((ki) => children(ki, 'X509Data', NS.dsig))
      .flatMap((d) => children(d, 'X509Certificate', NS.dsig))
      .map((c) => certificateOf(c.textContent ?? '')),
  );
  const authnRequestsSigned = sp.getAttribute('AuthnRequestsSigned') === 'true';
  if (authnRequestsSigned && certs.length === 0) throw refuse('the metadata says AuthnRequestsSigned but has no signing certificate to check them with');
  return {
    entityId,
    acs: postAcs,
    slo,
    certificate: certs[0] ?? null,
    authnRequestsSigned,
    nameidFormats: children(sp, 'NameIDFormat', NS.metadata).map((e) => (e.textContent ?? '').trim()),
  };
}

export async function spView(s: Services, row: SamlSpRow): Promise<SamlSpView> {
  const sp = spOf(row);
  const names = new Map((await findGroupsByReference(s.store.root, sp.allowedGroups)).map((g) => [g.reference_id, g.name]));
  return {
    id: sp.id,
    entity_id: sp.entityId,
    name: sp.name,
    nameid: sp.nameid,
    // One stored before the rule refused a user and password is shown without them (sign-ins still use it).
    acs_urls: sp.acs.map((a) => withoutUserinfo(a.location)),
    slo_urls: sp.slo.map((x) => withoutUserinfo(x.location)),
    authn_requests_signed: sp.authnRequestsSigned,
    has_certificate: sp.certificate !== null,
    allowed_groups: sp.allowedGroups.map((id) => names.get(id) ?? `(deleted group ${id})`),
    allowed_group_ids: sp.allowedGroups,
    two_factor: sp.twoFactor,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** Endpoints given one by one (a configuration file), instead of metadata. */
export interface SpEndpoints {
  acs: ReadonlyArray<{ url: string; index?: number; default?: boolean }>;
  slo?: ReadonlyArray<{ url: string; binding: 'post' | 'redirect'; responseUrl?: string }>;
  /** Its signing certificate: base64 DER, or PEM. */
  certificate?: string;
  authnRequestsSigned?: boolean;
}

/** A certificate given as text: base64 DER or PEM, and one X.509 parses. */
function givenCertificate(text: string): string {
  const b64 = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  try {
    new X509Certificate(Buffer.from(certificateOf(b64), 'base64'));
  } catch {
    throw refuse('{--certificate} is not an X.509 certificate (base64 DER or PEM)');
  }
  return b64;
}

/** The row a registration makes (every rule of the shell's and the console's), without its id. */
export async function spRowFor(s: Services, tx: Tx, input: NewSamlSp & { endpoints?: SpEndpoints }): Promise<Omit<SamlSpRow, 'id' | 'created_at'>> {
  const byHand = input.entityId !== undefined || input.acsUrl !== undefined || input.endpoints !== undefined;
  if ((input.metadata === undefined) === !byHand) {
    throw refuse('give the SP metadata ({--metadata}), or its entity id and ACS URL ({--entity-id} and {--acs-url}), not both');
  }
  const nameid = input.nameid ?? 'email';
  if (!Object.hasOwn(NAMEID_FORMATS, nameid)) throw refuse('{--nameid} is one of email, persistent, username');
  let fields: Omit<Awaited<ReturnType<typeof readSpMetadata>>, 'nameidFormats'>;
  const plainHttp = s.config.publicUrl.startsWith('http:');
  if (input.metadata !== undefined) fields = await readSpMetadata(input.metadata, plainHttp);
  else if (input.endpoints !== undefined) {
    if (input.entityId === undefined) throw refuse('{--entity-id} is required with endpoints');
    const e = input.endpoints;
    if (e.acs.length === 0) throw refuse('{--acs-url}: at least one AssertionConsumerService URL');
    const certificate = e.certificate === undefined ? null : givenCertificate(e.certificate);
    if (e.authnRequestsSigned === true && certificate === null) throw refuse('{--certificate} is needed to check signed AuthnRequests');
    fields = {
      entityId: entityIdOf(input.entityId),
      acs: e.acs.map((a, i) => ({
        binding: BINDING.post,
        location: endpointUrl(a.url.trim(), '{--acs-url}', plainHttp),
        index: a.index ?? i,
        is_default: a.default ?? i === 0,
      })),
      slo: (e.slo ?? []).map((x) => ({
        binding: BINDING[x.binding],
        location: endpointUrl(x.url.trim(), '{--slo-url}', plainHttp),
        ...(x.responseUrl !== undefined ? { response_location: endpointUrl(x.responseUrl.trim(), '{--slo-url}', plainHttp) } : {}),
      })),
      certificate,
      authnRequestsSigned: e.authnRequestsSigned === true,
    };
  } else {
    if (input.entityId === undefined || input.acsUrl === undefined) throw refuse('{--entity-id} and {--acs-url} go together');
    fields = {
      entityId: entityIdOf(input.entityId),
      acs: [{ binding: BINDING.post, location: endpointUrl(input.acsUrl.trim(), '{--acs-url}', plainHttp), index: 0, is_default: true }],
      slo: [],
      certificate: null,
      authnRequestsSigned: false,
    };
  }
  const name = (input.name ?? fields.entityId).trim().slice(0, 100);
  if (name === '') throw refuse('{--name} must be 1 to 100 characters');
  const groups: string[] = [];
  for (const g of input.allowedGroups ?? []) groups.push((await resolveGateGroup(tx, g)).reference_id);
  return {
    entity_id: fields.entityId,
    name,
    acs: JSON.stringify(fields.acs),
    slo: JSON.stringify(fields.slo),
    certificate: fields.certificate,
    authn_requests_signed: fields.authnRequestsSigned,
    nameid,
    allowed_groups: JSON.stringify(groups),
    two_factor: input.twoFactor === true,
  };
}

export async function addSp(s: Services, actor: Actor, input: NewSamlSp): Promise<SamlSpView> {
  const id = newShellSafeId(9);
  const row = await spRowFor(s, s.store.root, input);
  if (!(await insertSamlSp(s.store.root, { id, ...row })))
    throw new AppError('conflict', `an SP with the entity id ${row.entity_id.slice(0, 200)} is registered already`);
  await s.audit.record('saml_sp_added', actor, { account: null, sp: id, entity_id: row.entity_id, two_factor: row.two_factor });
  return spView(s, (await findSamlSp(s.store.root, { id }))!);
}

/** An SP by its id or its entity id. */
async function findSp(s: Services, idOrEntity: string): Promise<SamlSpRow> {
  const row = (await findSamlSp(s.store.root, { id: idOrEntity })) ?? (await findSamlSp(s.store.root, { entity_id: idOrEntity }));
  if (!row) throw new AppError('not_found', `no SAML service provider ${idOrEntity.slice(0, 100)}`);
  return row;
}

export const showSp = async (s: Services, idOrEntity: string): Promise<SamlSpView> => spView(s, await findSp(s, idOrEntity));

export const listSpViews = async (s: Services): Promise<SamlSpView[]> => Promise.all((await listSamlSps(s.store.root)).map((r) => spView(s, r)));

/** Sets whether sign-ins to a service provider need two factors. */
export async function setSpTwoFactor(s: Services, actor: Actor, idOrEntity: string, twoFactor: boolean): Promise<SamlSpView> {
  const row = await findSp(s, idOrEntity);
  await unlessManaged(s.store, actor.via, 'saml_sp', row.entity_id, (tx) => setSamlSpTwoFactor(tx, row.id, twoFactor));
  await s.audit.record('saml_sp_changed', actor, { account: null, sp: row.id, two_factor: twoFactor ? 'on' : 'off' });
  return showSp(s, row.id);
}

export async function removeSp(s: Services, actor: Actor, idOrEntity: string): Promise<SamlSpView> {
  const row = await findSp(s, idOrEntity);
  const view = await spView(s, row);
  await unlessManaged(s.store, actor.via, 'saml_sp', row.entity_id, (tx) => deleteSamlSp(tx, row.id));
  await s.audit.record('saml_sp_removed', actor, { account: null, sp: row.id, entity_id: row.entity_id });
  return view;
}
