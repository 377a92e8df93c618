/**
 * `providers:` other providers people sign in with (OpenID Connect: Google, GitLab, Keycloak;
 * GitHub; plain OAuth 2.0, by `kind`), each
 * named by its short name, with the client secret Gatehouse holds there as a reference. Every rule
 * is the shell's (providerRowFor). A provider of the same name made by hand is taken over; one an
 * earlier apply made and the file no longer names is removed, unless some account signs in only
 * through it (the apply is refused and says how many).
 */
import { AppError } from '../../errors';
import { assertTeamGroups, type GithubSettings, type OAuth2Settings, providerRowFor } from '../../upstream/providers';
import { countIdentitiesOf, deleteProvider, insertProvider, listProviders, stranded, updateProvider, type ProviderRow } from '../../store/upstream';
import { managedNames, markManaged } from '../../store/config-managed';
import type { ParsedConfig } from '../document';
import { atEntry } from './common';
import { dropUnnamed, listed, noResult, noteTakeOver, refChange, type ConfigKind } from '../kind';
import { sameSecret, SECRET_REF_SCHEMA, type SecretRef } from '../secrets';

interface ConfigProvider {
  kind?: 'oidc' | 'github' | 'oauth2';
  name: string;
  issuer?: string;
  url?: string;
  api_url?: string;
  allowed_org?: string;
  team_groups?: string[];
  authorization_url?: string;
  token_url?: string;
  userinfo_url?: string;
  id_field?: string;
  email_field?: string;
  email_verified_field?: string;
  name_field?: string;
  client_id: string;
  client_secret: SecretRef;
  scopes?: string[];
  display_name?: string;
  trust_email?: boolean;
}

/** The environment variable an exported provider's client secret is read from. */
export const providerSecretEnv = (name: string) => `GATEHOUSE_PROVIDER_SECRET_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

const FILE_KEYS: Record<string, keyof ConfigProvider> = {
  name: 'name',
  issuer: 'issuer',
  'client-id': 'client_id',
  'client-secret-file': 'client_secret',
  'client-secret-env': 'client_secret',
  scope: 'scopes',
  'display-name': 'display_name',
  'team-group': 'team_groups',
};

function atProvider(parsed: ParsedConfig, index: number, entry: object, err: unknown): never {
  return atEntry(parsed, ['providers', index], entry, FILE_KEYS, err);
}

function differences(was: ProviderRow, now: Omit<ProviderRow, 'id' | 'created_at'>): string[] {
  const out: string[] = [];
  const one = (key: string, a: string, b: string) => {
    if (a !== b) out.push(`${key}: ${b} (was ${a})`);
  };
  one('kind', was.kind, now.kind);
  one('issuer', was.issuer, now.issuer);
  if (was.settings !== now.settings) out.push('settings changed');
  one('client_id', was.client_id, now.client_id);
  one('display_name', was.display_name, now.display_name);
  if (was.scopes !== now.scopes) out.push(`scopes: ${listed(JSON.parse(now.scopes) as string[])} (was ${listed(JSON.parse(was.scopes) as string[])})`);
  one('trust_email', was.trust_email ? 'yes' : 'no', now.trust_email ? 'yes' : 'no');
  // Compared here, never shown.
  if (!sameSecret(was.client_secret, now.client_secret)) out.push('client secret changed');
  return out;
}

/** A provider's own fields in a file, by its kind (every one written out: a default could change). */
function kindFields(row: ProviderRow): Partial<ConfigProvider> {
  if (row.kind === 'github') {
    const g = JSON.parse(row.settings) as GithubSettings;
    return {
      url: row.issuer,
      api_url: g.api_url,
      ...(g.allowed_org !== null ? { allowed_org: g.allowed_org } : {}),
      ...(g.team_groups.length > 0 ? { team_groups: g.team_groups.map((t) => `${t.org}/${t.team}=${t.group}`) } : {}),
    };
  }
  if (row.kind === 'oauth2') {
    const o = JSON.parse(row.settings) as OAuth2Settings;
    return {
      authorization_url: o.authorization_url,
      token_url: o.token_url,
      userinfo_url: o.userinfo_url,
      id_field: o.id_field,
      email_field: o.email_field,
      ...(o.email_verified_field !== null ? { email_verified_field: o.email_verified_field } : {}),
      ...(o.name_field !== null ? { name_field: o.name_field } : {}),
    };
  }
  return { issuer: row.issuer };
}

export const providersKind: ConfigKind = {
  key: 'providers',
  schema: {
    description:
      'Other providers people can sign in with (OpenID Connect, GitHub, plain OAuth 2.0), each named by a short name (it names the callback address). A provider made by hand with the same name is taken over.',
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'client_id', 'client_secret'],
      properties: {
        kind: { enum: ['oidc', 'github', 'oauth2'], description: 'oidc (the default: OpenID Connect with discovery), github, or oauth2.' },
        name: { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$', description: '1 to 40 lower-case letters, digits and dashes.' },
        issuer: { type: 'string', minLength: 1, maxLength: 1000, description: "oidc: the provider's issuer URL (its discovery document is read from there)." },
        url: { type: 'string', minLength: 1, maxLength: 500, description: 'github: the web address of GitHub Enterprise Server (default https://github.com).' },
        api_url: { type: 'string', minLength: 1, maxLength: 500, description: "github: its API's address (default https://api.github.com)." },
        allowed_org: { type: 'string', minLength: 1, maxLength: 39, description: 'github: only members of this organization sign in.' },
        team_groups: {
          type: 'array',
          maxItems: 50,
          uniqueItems: true,
          items: { type: 'string', minLength: 3, maxLength: 300 },
          description: 'github: ORG/TEAM=GROUP, a team whose members are kept in a managed group at each sign-in.',
        },
        authorization_url: { type: 'string', minLength: 1, maxLength: 500, description: "oauth2: the provider's authorization endpoint." },
        token_url: { type: 'string', minLength: 1, maxLength: 500, description: "oauth2: the provider's token endpoint." },
        userinfo_url: { type: 'string', minLength: 1, maxLength: 500, description: 'oauth2: the address that answers, with the access token, who signed in.' },
        id_field: { type: 'string', minLength: 1, maxLength: 330, description: "oauth2: the user-info field with the person's lasting id (default id)." },
        email_field: { type: 'string', minLength: 1, maxLength: 330, description: 'oauth2: the user-info field with the email address (default email).' },
        email_verified_field: {
          type: 'string',
          minLength: 1,
          maxLength: 330,
          description: 'oauth2: a user-info field that is true when the provider verified the address.',
        },
        name_field: { type: 'string', minLength: 1, maxLength: 330, description: 'oauth2: the user-info field with the name (default name).' },
        client_id: { type: 'string', minLength: 1, maxLength: 500, description: 'The client id the provider gave Gatehouse.' },
        client_secret: { ...SECRET_REF_SCHEMA, description: `The client secret the provider gave Gatehouse: ${SECRET_REF_SCHEMA.description}` },
        scopes: {
          type: 'array',
          maxItems: 20,
          uniqueItems: true,
          items: { type: 'string', minLength: 1, maxLength: 64 },
          description: 'Scopes asked for besides openid (default: email, profile).',
        },
        display_name: { type: 'string', minLength: 1, maxLength: 100, description: 'What the button says after "Continue with" (default: the name).' },
        trust_email: { type: 'boolean', description: 'Link a new sign-in to the account with the same email when the provider says it verified it.' },
      },
    },
  },

  async reconcile({ tx, parsed, file, secret }) {
    const result = noResult();
    const providers = (parsed.doc.providers as ConfigProvider[] | undefined) ?? [];
    const managed = await managedNames(tx, 'provider');
    const byName = new Map((await listProviders(tx)).map((row) => [row.name, row]));
    const named = new Set<string>();
    for (const [index, p] of providers.entries()) {
      if (named.has(p.name)) throw new AppError('invalid_input', `${parsed.at(['providers', index, 'name'])}: the provider ${p.name} is named twice`);
      named.add(p.name);
      const row = byName.get(p.name);
      const recorded = managed.get(p.name);
      const value = await secret(
        ['providers', index, 'client_secret'],
        row && {
          kind: 'provider',
          name: p.name,
          current: row.client_secret,
          stored: recorded?.refs?.client_secret ?? null,
          placeholder: providerSecretEnv(p.name),
        },
      );
      let wanted: Omit<ProviderRow, 'id' | 'created_at'>;
      try {
        wanted = providerRowFor({
          kind: p.kind,
          name: p.name,
          issuer: p.issuer,
          url: p.url,
          apiUrl: p.api_url,
          allowedOrg: p.allowed_org,
          teamGroups: p.team_groups,
          authorizationUrl: p.authorization_url,
          tokenUrl: p.token_url,
          userinfoUrl: p.userinfo_url,
          idField: p.id_field,
          emailField: p.email_field,
          emailVerifiedField: p.email_verified_field,
          nameField: p.name_field,
          clientId: p.client_id,
          clientSecret: value,
          scopes: p.scopes,
          displayName: p.display_name,
          trustEmail: p.trust_email === true,
        });
        await assertTeamGroups(tx, wanted);
      } catch (err) {
        atProvider(parsed, index, p, err);
      }
      if (!row) {
        await insertProvider(tx, wanted);
        result.audits.push((s, actor) => s.audit.record('provider_added', actor, { account: null, provider: wanted.name, issuer: wanted.issuer }));
        result.changes.push({ sign: '+', kind: 'provider', name: p.name, detail: null });
      } else {
        const changed = differences(row, wanted);
        const moved = recorded?.file === file ? refChange('client_secret', recorded.refs?.client_secret, p.client_secret) : null;
        if (changed.length > 0) {
          const { name: _same, ...fields } = wanted;
          await updateProvider(tx, row.id, fields);
          result.audits.push((s, actor) => s.audit.record('provider_changed', actor, { account: null, provider: row.name, issuer: wanted.issuer }));
        }
        noteTakeOver(result, managed, p.name, file, 'provider', p.name);
        const details = [...changed, ...(moved === null ? [] : [moved])];
        if (details.length > 0) result.changes.push({ sign: '~', kind: 'provider', name: p.name, detail: details.join('; ') });
      }
      await markManaged(tx, 'provider', p.name, file, !row, { client_secret: p.client_secret });
    }
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'provider',
      managed,
      named,
      remove: {
        stored: byName,
        drop: async (row, name) => {
          // Counted in this transaction: an account that signs in only through it keeps it.
          const locked = await stranded(tx, row.id);
          if (locked > 0) {
            throw new AppError(
              'last_credential',
              `the provider ${name} is no longer in ${file}, but ${locked} account${locked === 1 ? ' signs' : 's sign'} in only through it: keep it in the file until they have another way in (a password reset link gives one)`,
            );
          }
          const identities = await countIdentitiesOf(tx, row.id);
          await deleteProvider(tx, row.id);
          result.audits.push((s, actor) => s.audit.record('provider_removed', actor, { account: null, provider: name, identities }));
        },
      },
    });
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const rows = await listProviders(s.store.root);
    if (rows.length === 0) return undefined;
    const managed = await managedNames(s.store.root, 'provider');
    return rows.map((row): ConfigProvider => {
      const scopes = JSON.parse(row.scopes) as string[];
      return {
        ...(row.kind !== 'oidc' ? { kind: row.kind } : {}),
        name: row.name,
        ...kindFields(row),
        client_id: row.client_id,
        // The reference a file applied, as it was; else (made by hand) the variable named for it.
        client_secret: (managed.get(row.name)?.refs?.client_secret as SecretRef | undefined) ?? { env: providerSecretEnv(row.name) },
        ...(row.kind !== 'oidc' || scopes.join(' ') !== 'email profile' ? { scopes } : {}),
        ...(row.display_name !== row.name ? { display_name: row.display_name } : {}),
        ...(row.trust_email ? { trust_email: true } : {}),
      };
    });
  },
};
