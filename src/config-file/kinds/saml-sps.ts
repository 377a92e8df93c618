/**
 * `saml_sps:` SAML service providers, each named by its entity id: from its metadata (a file beside
 * the configuration file) or its endpoints given one by one, which is how `config export` writes
 * them (metadata is read once; what it said is what is stored). Every rule is the shell's
 * (spRowFor). An SP of the same entity id made by hand is taken over; one an earlier apply made and
 * the file no longer names is removed.
 */
import { AppError, isAppError, reworded } from '../../errors';
import { newShellSafeId } from '../../auth/ids';
import { deletedGateName, resolveGateGroup } from '../../groups/manage';
import { spOf, spRowFor, type NameIdKind, type SpEndpoints, BINDING } from '../../saml/providers';
import { MAX_METADATA } from '../../saml/xml';
import { withoutUserinfo } from '../../runtime/targets';
import { findGroupsByReference } from '../../store/groups';
import { deleteSamlSp, insertSamlSp, listSamlSps, type SamlSpRow, updateSamlSp } from '../../store/saml';
import { managedNames, markManaged } from '../../store/config-managed';
import type { ParsedConfig } from '../document';
import { atEntry, allowedGroupsSchema } from './common';
import { dropUnnamed, listed, noResult, noteTakeOver, type ConfigKind } from '../kind';

interface ConfigSp {
  entity_id: string;
  name?: string;
  metadata?: { file: string };
  acs?: Array<{ url: string; index?: number; default?: boolean }>;
  slo?: Array<{ url: string; binding: 'post' | 'redirect'; response_url?: string }>;
  certificate?: string;
  authn_requests_signed?: boolean;
  nameid?: NameIdKind;
  allowed_groups?: string[];
  two_factor?: boolean;
}

const url = { type: 'string', minLength: 1, maxLength: 1000 } as const;
/** Keys that describe the SP's endpoints: its metadata says them instead. */
const ENDPOINT_KEYS = ['acs', 'slo', 'certificate', 'authn_requests_signed'] as const;

/** The shell's flags, as this file's keys: a core message names the key to fix. */
const FILE_KEYS: Record<string, string> = {
  'entity-id': 'entity_id',
  'acs-url': 'acs',
  'slo-url': 'slo',
  metadata: 'metadata',
  name: 'name',
  nameid: 'nameid',
  certificate: 'certificate',
  'allowed-group': 'allowed_groups',
};

function atSp(parsed: ParsedConfig, index: number, entry: object, err: unknown): never {
  return atEntry(parsed, ['saml_sps', index], entry, FILE_KEYS, err);
}

const endpointsOf = (sp: ConfigSp): SpEndpoints => ({
  acs: sp.acs ?? [],
  slo: (sp.slo ?? []).map((x) => ({ url: x.url, binding: x.binding, ...(x.response_url !== undefined ? { responseUrl: x.response_url } : {}) })),
  ...(sp.certificate !== undefined ? { certificate: sp.certificate } : {}),
  authnRequestsSigned: sp.authn_requests_signed === true,
});

/** What differs between two rows of one SP, said in the file's words (a certificate only as changed). */
function differences(was: SamlSpRow, now: Omit<SamlSpRow, 'id' | 'created_at'>, groupNames: (ids: string) => string): string[] {
  const out: string[] = [];
  if (was.name !== now.name) out.push(`name: ${now.name} (was ${was.name})`);
  if (was.nameid !== now.nameid) out.push(`nameid: ${now.nameid} (was ${was.nameid})`);
  const urls = (json: string) => (JSON.parse(json) as Array<{ location: string }>).map((a) => withoutUserinfo(a.location));
  // An index left out (metadata may) is its position: the same endpoints, however numbered.
  const acs = (json: string) =>
    JSON.stringify(
      (JSON.parse(json) as Array<{ location: string; index: number | null; is_default: boolean }>).map((a, i) => [a.location, a.index ?? i, a.is_default]),
    );
  if (acs(was.acs) !== acs(now.acs)) out.push(`acs: ${listed(urls(now.acs))} (was ${listed(urls(was.acs))})`);
  if (was.slo !== now.slo) out.push(`slo: ${listed(urls(now.slo))} (was ${listed(urls(was.slo))})`);
  if (was.certificate !== now.certificate) out.push(now.certificate === null ? 'certificate removed' : 'certificate changed');
  if (was.authn_requests_signed !== now.authn_requests_signed) out.push(`authn_requests_signed: ${now.authn_requests_signed ? 'yes' : 'no'}`);
  if (was.allowed_groups !== now.allowed_groups) out.push(`allowed_groups: ${groupNames(now.allowed_groups)} (was ${groupNames(was.allowed_groups)})`);
  if (was.two_factor !== now.two_factor) out.push(`two_factor: ${now.two_factor ? 'yes' : 'no'}`);
  return out;
}

export const samlSpsKind: ConfigKind = {
  key: 'saml_sps',
  schema: {
    description:
      'SAML service providers (apps that sign in with SAML), each named by its entity id: from its metadata file, or its endpoints one by one. An SP made by hand with the same entity id is taken over.',
    type: 'array',
    maxItems: 1000,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['entity_id'],
      properties: {
        entity_id: { ...url, description: 'The entity id the SP names itself with (its metadata must say the same).' },
        name: { type: 'string', minLength: 1, maxLength: 100, description: 'What people see (default: the entity id).' },
        metadata: {
          type: 'object',
          additionalProperties: false,
          required: ['file'],
          properties: { file: { type: 'string', minLength: 1, maxLength: 4096 } },
          description: "The SP's metadata XML: {file: PATH}, beside this file (or under /run/secrets or $CREDENTIALS_DIRECTORY).",
        },
        acs: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['url'],
            properties: { url, index: { type: 'integer', minimum: 0, maximum: 65535 }, default: { type: 'boolean' } },
          },
          description: 'Without metadata: where the SP receives Responses (HTTP-POST); index and default as its metadata numbers them.',
        },
        slo: {
          type: 'array',
          maxItems: 20,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['url', 'binding'],
            properties: { url, binding: { enum: ['post', 'redirect'] }, response_url: url },
          },
          description: 'Without metadata: its single logout endpoints.',
        },
        certificate: {
          type: 'string',
          minLength: 100,
          maxLength: 20000,
          description: 'Without metadata: its signing certificate (base64 DER or PEM; public).',
        },
        authn_requests_signed: { type: 'boolean', description: 'Without metadata: it signs its AuthnRequests (checked with certificate).' },
        nameid: { enum: ['email', 'persistent', 'username'], description: 'The NameID it gets (default: email).' },
        allowed_groups: allowedGroupsSchema('Only members of these managed groups may sign in (none: everyone).'),
        two_factor: { type: 'boolean', description: 'Sign-ins need a second factor.' },
      },
    },
  },

  async reconcile({ s, tx, parsed, file, referencedFile }) {
    const result = noResult();
    const sps = (parsed.doc.saml_sps as ConfigSp[] | undefined) ?? [];
    const managed = await managedNames(tx, 'saml_sp');
    const stored = new Map((await listSamlSps(tx)).map((row) => [row.entity_id, row]));
    const named = new Set<string>();
    const groupName = new Map<string, string>();
    const groupNames = (json: string) => listed((JSON.parse(json) as string[]).map((id) => groupName.get(id) ?? id));
    for (const [index, sp] of sps.entries()) {
      if (named.has(sp.entity_id)) throw new AppError('invalid_input', `${parsed.at(['saml_sps', index, 'entity_id'])}: the SP ${sp.entity_id} is named twice`);
      named.add(sp.entity_id);
      const byHand = ENDPOINT_KEYS.filter((k) => k in sp);
      if (sp.metadata !== undefined && byHand.length > 0)
        throw new AppError('invalid_input', `${parsed.at(['saml_sps', index, byHand[0]])}: give metadata, or ${byHand[0]} and the other endpoints, not both`);
      if (sp.metadata === undefined && sp.acs === undefined)
        throw new AppError('invalid_input', `${parsed.at(['saml_sps', index])}: give the SP's metadata ({file: PATH}) or its acs endpoints`);
      for (const [j, g] of (sp.allowed_groups ?? []).entries()) {
        const group = await resolveGateGroup(tx, g).catch((err: Error) => {
          const message = `${parsed.at(['saml_sps', index, 'allowed_groups', j])}: ${err.message}`;
          throw isAppError(err) ? reworded(err, message) : new AppError('invalid_input', message);
        });
        groupName.set(group.reference_id, group.name);
      }
      const metadata = sp.metadata === undefined ? undefined : await referencedFile(['saml_sps', index, 'metadata'], MAX_METADATA, 'metadata file');
      const wanted = await spRowFor(s, tx, {
        ...(metadata !== undefined ? { metadata } : { entityId: sp.entity_id, endpoints: endpointsOf(sp) }),
        name: sp.name,
        nameid: sp.nameid,
        allowedGroups: sp.allowed_groups,
        twoFactor: sp.two_factor === true,
      }).catch((err: unknown) => atSp(parsed, index, sp, err));
      if (wanted.entity_id !== sp.entity_id) {
        throw new AppError(
          'invalid_input',
          `${parsed.at(['saml_sps', index, 'metadata'])}: the metadata names the SP ${wanted.entity_id.slice(0, 200)}, not ${sp.entity_id}`,
        );
      }
      const row = stored.get(sp.entity_id);
      let made = false;
      if (!row) {
        const id = newShellSafeId(9);
        await insertSamlSp(tx, { id, ...wanted });
        made = true;
        result.audits.push((s2, actor) =>
          s2.audit.record('saml_sp_added', actor, { account: null, sp: id, entity_id: wanted.entity_id, two_factor: wanted.two_factor }),
        );
        result.changes.push({ sign: '+', kind: 'saml_sp', name: sp.entity_id, detail: null });
      } else {
        for (const g of await findGroupsByReference(tx, JSON.parse(row.allowed_groups) as string[])) groupName.set(g.reference_id, g.name);
        const changed = differences(row, wanted, groupNames);
        if (changed.length > 0) {
          const { entity_id: _same, ...fields } = wanted;
          await updateSamlSp(tx, row.id, fields);
          result.audits.push((s2, actor) =>
            s2.audit.record('saml_sp_changed', actor, { account: null, sp: row.id, two_factor: wanted.two_factor ? 'on' : 'off' }),
          );
        }
        noteTakeOver(result, managed, sp.entity_id, file, 'saml_sp', sp.entity_id);
        if (changed.length > 0) result.changes.push({ sign: '~', kind: 'saml_sp', name: sp.entity_id, detail: changed.join('; ') });
      }
      await markManaged(tx, 'saml_sp', sp.entity_id, file, made);
    }
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'saml_sp',
      managed,
      named,
      remove: {
        stored,
        drop: async (row) => {
          await deleteSamlSp(tx, row.id);
          result.audits.push((s2, actor) => s2.audit.record('saml_sp_removed', actor, { account: null, sp: row.id, entity_id: row.entity_id }));
        },
      },
    });
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const rows = [...(await listSamlSps(s.store.root))].sort((a, b) => a.entity_id.localeCompare(b.entity_id));
    if (rows.length === 0) return undefined;
    const out: ConfigSp[] = [];
    for (const row of rows) {
      const sp = spOf(row);
      const groups = await findGroupsByReference(s.store.root, sp.allowedGroups);
      const binding = (b: string): 'post' | 'redirect' => (b === BINDING.redirect ? 'redirect' : 'post');
      out.push({
        entity_id: sp.entityId,
        ...(sp.name !== sp.entityId ? { name: sp.name } : {}),
        // An endpoint stored by an earlier version with a user or password is written with them as
        // `***`: the file is refused at that line until it is set anew, and holds no password.
        acs: sp.acs.map((a, i) => ({
          url: withoutUserinfo(a.location),
          ...(a.index !== null && a.index !== i ? { index: a.index } : {}),
          ...(a.is_default !== (i === 0) ? { default: a.is_default } : {}),
        })),
        ...(sp.slo.length > 0
          ? {
              slo: sp.slo.map((x) => ({
                url: withoutUserinfo(x.location),
                binding: binding(x.binding),
                ...(x.response_location !== undefined ? { response_url: withoutUserinfo(x.response_location) } : {}),
              })),
            }
          : {}),
        ...(sp.certificate !== null ? { certificate: sp.certificate } : {}),
        ...(sp.authnRequestsSigned ? { authn_requests_signed: true } : {}),
        ...(sp.nameid !== 'email' ? { nameid: sp.nameid } : {}),
        // A gate's deleted group is written by its id: applied, it is refused, never opened to everyone.
        ...(sp.allowedGroups.length > 0
          ? { allowed_groups: sp.allowedGroups.map((id) => groups.find((g) => g.reference_id === id)?.name ?? deletedGateName(id)) }
          : {}),
        ...(sp.twoFactor ? { two_factor: true } : {}),
      });
    }
    return out;
  },
};
