/**
 * `oidc_clients:` relying parties with a fixed client_id (an app can be set up before Gatehouse
 * first starts) and their secret from a reference, never the value. Every rule is the shell's
 * (clientRowFor); the rows are written here, in the file's transaction. A client of the file's id
 * made by hand is taken over (`config export` writes every client, so a store's own export can be
 * applied back to it); one an earlier apply made and the file no longer names is removed.
 */
import { AppError, isAppError, reworded } from '../../errors';
import type { Services } from '../../services';
import type { Tx } from '../../store/connection';
import { deleteClient, insertClient, listClients, updateClient, type OidcClientRow } from '../../store/oidc';
import { resolveGateGroup } from '../../groups/manage';
import { managedNames, markManaged } from '../../store/config-managed';
import { clientRowFor, clientView, forgetClient, ID_TOKEN_CLAIMS, ownAudience, parseClientId, type ClientView, type NewClient } from '../../oidc/clients';
import type { ParsedConfig } from '../document';
import { atEntry, allowedGroupsSchema } from './common';
import { dropUnnamed, listed, noResult, noteTakeOver, refChange, type ConfigKind, type KeepSecret } from '../kind';
import { sameSecret, SECRET_REF_SCHEMA, type SecretRef } from '../secrets';

interface ConfigClient {
  client_id: string;
  name: string;
  secret?: SecretRef;
  public?: boolean;
  redirect_uris?: string[];
  post_logout_redirect_uris?: string[];
  backchannel_logout_uri?: string;
  device?: boolean;
  credentials?: boolean;
  audience?: string;
  allowed_groups?: string[];
  first_party?: boolean;
  two_factor?: boolean;
  id_token_claims?: string[];
}

/** A secret from a file must be one a machine made: long, and nothing a header would mangle. */
const MIN_SECRET = 32;
const SECRET_CHARS = /^[\x21-\x7e]+$/;

const uris = (description: string) => ({
  type: 'array',
  maxItems: 100,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 500 },
  description,
});

/** The shell's flags, as this file's keys: a core message names the key to fix. */
const FILE_KEYS: Record<string, keyof ConfigClient> = {
  name: 'name',
  'redirect-uri': 'redirect_uris',
  'post-logout-redirect-uri': 'post_logout_redirect_uris',
  'backchannel-logout-uri': 'backchannel_logout_uri',
  device: 'device',
  credentials: 'credentials',
  audience: 'audience',
  public: 'public',
  'first-party': 'first_party',
  'allowed-group': 'allowed_groups',
  'two-factor': 'two_factor',
  'id-token-claims': 'id_token_claims',
};

function atClient(parsed: ParsedConfig, index: number, entry: object, err: unknown): never {
  return atEntry(parsed, ['oidc_clients', index], entry, FILE_KEYS, err);
}

/** What the shell would be asked for, from the file's entry. */
const inputOf = (c: ConfigClient): NewClient => ({
  name: c.name,
  redirectUris: c.redirect_uris ?? [],
  device: c.device === true,
  credentials: c.credentials === true,
  audience: c.audience,
  postLogoutRedirectUris: c.post_logout_redirect_uris,
  public: c.public === true,
  firstParty: c.first_party === true,
  allowedGroups: c.allowed_groups,
  twoFactor: c.two_factor === true,
  backchannelLogoutUri: c.backchannel_logout_uri,
  idTokenClaims: c.id_token_claims,
});

const yesNo = (b: boolean) => (b ? 'yes' : 'no');
const shown = (v: string | null) => v ?? 'none';

/** What differs between a client as stored and as the file wants it: the key, and a phrase (never a secret). */
function differences(was: ClientView, now: ClientView): Array<{ key: string; text: string }> {
  const out: Array<{ key: string; text: string }> = [];
  const list = (key: string, a: readonly string[], b: readonly string[]) => {
    if (a.join('\n') !== b.join('\n')) out.push({ key, text: `${key}: ${listed(b)} (was ${listed(a)})` });
  };
  const one = (key: string, a: string, b: string) => {
    if (a !== b) out.push({ key, text: `${key}: ${b} (was ${a})` });
  };
  one('name', was.name, now.name);
  one('public', yesNo(was.public), yesNo(now.public));
  list('grants', was.grants, now.grants);
  one('audience', shown(was.audience), shown(now.audience));
  list('redirect_uris', was.redirect_uris, now.redirect_uris);
  list('post_logout_redirect_uris', was.post_logout_redirect_uris, now.post_logout_redirect_uris);
  one('backchannel_logout_uri', shown(was.backchannel_logout_uri), shown(now.backchannel_logout_uri));
  list('allowed_groups', was.allowed_groups, now.allowed_groups);
  one('first_party', yesNo(was.first_party), yesNo(now.first_party));
  one('two_factor', yesNo(was.two_factor), yesNo(now.two_factor));
  list('id_token_claims', was.id_token_claims, now.id_token_claims);
  return out;
}

/** The environment variable an exported client's secret is read from. */
export const secretEnvName = (clientId: string) => `GATEHOUSE_CLIENT_SECRET_${clientId.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** config_managed's key of a client (refusals elsewhere look names up in lower case). */
const keyOf = (clientId: string) => clientId.toLowerCase();

interface Wanted {
  index: number;
  entry: ConfigClient;
}

/** The file's clients, checked beyond the schema: ids valid and once each, a secret exactly when not public. */
function wantedClients(parsed: ParsedConfig): Map<string, Wanted> {
  const wanted = new Map<string, Wanted>();
  ((parsed.doc.oidc_clients as ConfigClient[] | undefined) ?? []).forEach((entry, index) => {
    const at = (key: string) => parsed.at(['oidc_clients', index, key]);
    try {
      parseClientId(entry.client_id);
    } catch (err) {
      throw new AppError('invalid_input', `${at('client_id')}: ${(err as Error).message}`);
    }
    // Ids differing only in case are one id here: refusals elsewhere compare them ignoring case.
    if (wanted.has(keyOf(entry.client_id))) throw new AppError('invalid_input', `${at('client_id')}: the client ${entry.client_id} is named twice`);
    if (entry.public === true && entry.secret !== undefined)
      throw new AppError('invalid_input', `${at('secret')}: a public client has no secret (leave out secret, or public)`);
    if (entry.public !== true && entry.secret === undefined)
      throw new AppError('invalid_input', `${parsed.at(['oidc_clients', index])}: give the client a secret ({file: PATH} or {env: NAME}), or public: true`);
    wanted.set(keyOf(entry.client_id), { index, entry });
  });
  return wanted;
}

async function wantedSecret(
  parsed: ParsedConfig,
  secret: (path: ReadonlyArray<string | number>, keep?: KeepSecret) => Promise<string>,
  w: Wanted,
  keep: KeepSecret | undefined,
): Promise<string | null> {
  if (w.entry.public === true) return null;
  const path = ['oidc_clients', w.index, 'secret'];
  const value = await secret(path, keep);
  if (value.length < MIN_SECRET || !SECRET_CHARS.test(value)) {
    throw new AppError(
      'invalid_input',
      `${parsed.at(path)}: a client secret must be at least ${MIN_SECRET} characters, letters, digits and punctuation (openssl rand -base64 32 makes one)`,
    );
  }
  return value;
}

async function viewOf(s: Services, tx: Tx, row: Omit<OidcClientRow, 'created_at'>): Promise<ClientView> {
  return clientView(s, { ...row, created_at: 0 }, tx);
}

export const oidcClientsKind: ConfigKind = {
  key: 'oidc_clients',
  schema: {
    description:
      'OpenID Connect clients (apps that sign in with Gatehouse), each with a fixed client_id and its secret as a reference. Clients made by hand with the same client_id are taken over.',
    type: 'array',
    maxItems: 1000,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['client_id', 'name'],
      properties: {
        client_id: {
          type: 'string',
          pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
          description: 'The client id the app is configured with: 1 to 64 letters, digits, ".", "_" and "-", starting with a letter or digit.',
        },
        name: { type: 'string', minLength: 1, maxLength: 100, description: 'What people see on the consent page.' },
        secret: { ...SECRET_REF_SCHEMA, description: `The client secret (at least ${MIN_SECRET} characters): ${SECRET_REF_SCHEMA.description}` },
        public: { type: 'boolean', description: 'A browser, native or device app without a secret (PKCE required).' },
        redirect_uris: uris('A browser sign-in: where the app receives the code (https, or http on localhost).'),
        post_logout_redirect_uris: uris('Where to return after signing out.'),
        backchannel_logout_uri: { type: 'string', minLength: 1, maxLength: 500, description: "Where Gatehouse tells the app that a person's session ended." },
        device: { type: 'boolean', description: 'The device flow: a TV or command line shows a code, the person confirms it at /device.' },
        credentials: { type: 'boolean', description: 'Client credentials: the app acts as itself (machine to machine).' },
        audience: { type: 'string', minLength: 1, maxLength: 200, description: 'With credentials: the resource server its tokens are for.' },
        allowed_groups: allowedGroupsSchema('Only members of these managed groups may sign in (none: everyone).'),
        first_party: { type: 'boolean', description: 'Your own app: no consent page.' },
        two_factor: { type: 'boolean', description: 'Sign-ins need a second factor.' },
        id_token_claims: {
          type: 'array',
          maxItems: Object.keys(ID_TOKEN_CLAIMS).length,
          uniqueItems: true,
          items: { enum: Object.keys(ID_TOKEN_CLAIMS) },
          description:
            'Claims its ID tokens carry as well as userinfo, each when its scope is granted (email also brings email_verified): for apps that read only the ID token.',
        },
      },
    },
  },

  async reconcile({ s, tx, parsed, file, secret }) {
    const result = noResult();
    const wanted = wantedClients(parsed);
    const managedByFile = await managedNames(tx, 'oidc_client');
    const existing = await listClients(tx);
    const byKey = new Map<string, OidcClientRow[]>();
    for (const row of existing) byKey.set(keyOf(row.client_id), [...(byKey.get(keyOf(row.client_id)) ?? []), row]);
    for (const [key, w] of wanted) {
      const id = w.entry.client_id;
      const found = byKey.get(key) ?? [];
      const other = found.find((r) => r.client_id !== id);
      if (other) {
        throw new AppError(
          'invalid_input',
          `${parsed.at(['oidc_clients', w.index, 'client_id'])}: a client ${other.client_id} exists (client ids differing only in case are refused)`,
        );
      }
      const before = found[0];
      const recorded = managedByFile.get(key);
      const keep: KeepSecret | undefined =
        before !== undefined && before.client_secret !== null
          ? { kind: 'oidc_client', name: id, current: before.client_secret, stored: recorded?.refs?.secret ?? null, placeholder: secretEnvName(id) }
          : undefined;
      const value = await wantedSecret(parsed, secret, w, keep);
      // Each gate's group at its own line: the same rule clientRowFor applies (a managed group).
      for (const [j, g] of (w.entry.allowed_groups ?? []).entries()) {
        await resolveGateGroup(tx, g).catch((err: Error) => {
          const message = `${parsed.at(['oidc_clients', w.index, 'allowed_groups', j])}: ${err.message}`;
          throw isAppError(err) ? reworded(err, message) : new AppError('invalid_input', message);
        });
      }
      const row = await clientRowFor(s, tx, id, inputOf(w.entry), value).catch((err: unknown) => atClient(parsed, w.index, w.entry, err));
      if (!before) {
        await insertClient(tx, row);
        result.audits.push(async (s2, actor) => {
          forgetClient(s2, id);
          await s2.audit.record('client_added', actor, { account: null, client_id: id, name: row.name });
        });
        result.changes.push({ sign: '+', kind: 'oidc_client', name: id, detail: null });
      } else {
        const changed = differences(await clientView(s, before, tx), await viewOf(s, tx, row));
        // Compared here, never shown: the plan says only that it changed.
        if (
          !(before.client_secret === null || row.client_secret === null
            ? before.client_secret === row.client_secret
            : sameSecret(before.client_secret, row.client_secret))
        )
          changed.push({ key: 'secret', text: 'secret changed' });
        const moved = recorded?.file === file ? refChange('secret', recorded.refs?.secret, w.entry.secret) : null;
        if (changed.length > 0) {
          await updateClient(tx, id, row);
          const keys = changed.map((c) => c.key).join(', ');
          result.audits.push(async (s2, actor) => {
            forgetClient(s2, id);
            await s2.audit.record('client_changed', actor, { account: null, client_id: id, changed: keys });
          });
        }
        noteTakeOver(result, managedByFile, key, file, 'oidc_client', id);
        const details = [...changed.map((c) => c.text), ...(moved === null ? [] : [moved])];
        if (details.length > 0) result.changes.push({ sign: '~', kind: 'oidc_client', name: id, detail: details.join('; ') });
      }
      await markManaged(tx, 'oidc_client', key, file, !before, w.entry.secret === undefined ? null : { secret: w.entry.secret });
    }
    // Removed: what an earlier apply managed and the file no longer names.
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'oidc_client',
      objects: existing.map((r) => [keyOf(r.client_id), `${r.client_id} (${r.name})`] as const),
      managed: managedByFile,
      named: wanted,
      shown: (key) => byKey.get(key)?.[0]?.client_id ?? key,
      remove: {
        stored: byKey,
        drop: async (rows) => {
          for (const row of rows) {
            await deleteClient(tx, row.client_id);
            result.audits.push(async (s2, actor) => {
              forgetClient(s2, row.client_id);
              await s2.audit.record('client_removed', actor, { account: null, client_id: row.client_id });
            });
          }
        },
      },
    });
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const rows = [...(await listClients(s.store.root))].sort((a, b) => a.client_id.localeCompare(b.client_id));
    if (rows.length === 0) return undefined;
    const managed = await managedNames(s.store.root, 'oidc_client');
    const out: ConfigClient[] = [];
    for (const row of rows) {
      const v = await clientView(s, row);
      // A gate's deleted group is written as (deleted group ID), a name no group may take: applied, it is refused.
      const groups = v.allowed_groups;
      out.push({
        client_id: v.client_id,
        name: v.name,
        // The reference a file applied, as it was; else (made by hand) the variable named for it.
        ...(v.public
          ? { public: true }
          : { secret: (managed.get(keyOf(v.client_id))?.refs?.secret as SecretRef | undefined) ?? { env: secretEnvName(v.client_id) } }),
        ...(v.redirect_uris.length > 0 ? { redirect_uris: v.redirect_uris } : {}),
        ...(v.post_logout_redirect_uris.length > 0 ? { post_logout_redirect_uris: v.post_logout_redirect_uris } : {}),
        ...(v.backchannel_logout_uri !== null ? { backchannel_logout_uri: v.backchannel_logout_uri } : {}),
        ...(v.grants.includes('device_code') ? { device: true } : {}),
        ...(v.grants.includes('client_credentials') ? { credentials: true } : {}),
        ...(v.audience !== null && v.audience !== ownAudience(v.client_id) ? { audience: v.audience } : {}),
        ...(groups.length > 0 ? { allowed_groups: groups } : {}),
        ...(v.first_party ? { first_party: true } : {}),
        ...(v.two_factor ? { two_factor: true } : {}),
        ...(v.id_token_claims.length > 0 ? { id_token_claims: v.id_token_claims } : {}),
      });
    }
    return out;
  },
};
