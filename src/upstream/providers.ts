/**
 * Upstream providers as the operator manages them (contract sections 14 and 26): any OpenID
 * Connect provider with discovery (Google, Microsoft, GitLab, Keycloak, Authentik, another
 * Gatehouse), GitHub (or GitHub Enterprise Server), and any other provider that speaks plain
 * OAuth 2.0 with a user-info endpoint (`oauth2`). The client secret comes from a file or the
 * environment (never the command line), lives in the store, and is never shown again.
 */
import { AppError } from '../errors';
import { iso } from '../clock';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { unlessManaged } from '../managed/managed-by';
import {
  countIdentitiesOf,
  deleteProvider,
  findProvider,
  insertProvider,
  listProviders,
  type ProviderKind,
  type ProviderRow,
  stranded,
} from '../store/upstream';
import type { Tx } from '../store/connection';
import { managedGroupNamed, parseGroupName } from '../groups/manage';
import { outboundUrl } from '../runtime/targets';

export interface NewProvider {
  /** `oidc` (the default), `github` or `oauth2`. */
  kind?: ProviderKind;
  name: string;
  /** An OpenID Connect provider's issuer (`oidc` only). */
  issuer?: string;
  clientId: string;
  clientSecret: string;
  scopes?: readonly string[];
  displayName?: string;
  trustEmail?: boolean;
  /** GitHub: its web address (default https://github.com) and API address (default https://api.github.com). */
  url?: string;
  apiUrl?: string;
  /** GitHub: only members of this organisation sign in. */
  allowedOrg?: string;
  /** GitHub: `ORG/TEAM=GROUP`, a team whose members are kept in a managed group at each sign-in. */
  teamGroups?: readonly string[];
  /** `oauth2`: the three endpoints and the user-info fields. */
  authorizationUrl?: string;
  tokenUrl?: string;
  userinfoUrl?: string;
  idField?: string;
  emailField?: string;
  emailVerifiedField?: string;
  nameField?: string;
}

/** A GitHub team and the managed group its members are kept in (organisation and team in GitHub's lower case). */
export interface TeamGroup {
  org: string;
  team: string;
  group: string;
}

export interface GithubSettings {
  api_url: string;
  allowed_org: string | null;
  team_groups: TeamGroup[];
}

export interface OAuth2Settings {
  authorization_url: string;
  token_url: string;
  userinfo_url: string;
  id_field: string;
  email_field: string;
  email_verified_field: string | null;
  name_field: string | null;
}

export type ProviderSettings = Record<string, never> | GithubSettings | OAuth2Settings;

export const githubSettings = (p: Pick<ProviderRow, 'kind' | 'settings'>): GithubSettings => JSON.parse(p.settings) as GithubSettings;
export const oauth2Settings = (p: Pick<ProviderRow, 'kind' | 'settings'>): OAuth2Settings => JSON.parse(p.settings) as OAuth2Settings;

export interface ProviderView {
  kind: ProviderKind;
  name: string;
  display_name: string;
  /** Where the provider is: an OIDC issuer, GitHub's web address, an OAuth 2.0 provider's authorization URL. */
  issuer: string;
  /** The settings of its kind (none for `oidc`). */
  settings: ProviderSettings;
  client_id: string;
  scopes: string[];
  trust_email: boolean;
  /** The address to register upstream as the client's redirect URI. */
  redirect_uri: string;
  linked_identities: number;
  created_at: string;
}

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

export const callbackPath = (name: string) => `/signin/provider/${name}/callback`;

export async function viewProvider(s: Services, p: ProviderRow): Promise<ProviderView> {
  return {
    kind: p.kind,
    name: p.name,
    display_name: p.display_name,
    issuer: p.issuer,
    settings: JSON.parse(p.settings) as ProviderSettings,
    client_id: p.client_id,
    scopes: JSON.parse(p.scopes) as string[],
    trust_email: p.trust_email,
    redirect_uri: `${s.config.publicUrl}${callbackPath(p.name)}`,
    linked_identities: await countIdentitiesOf(s.store.root, p.id),
    created_at: iso(p.created_at),
  };
}

/** The issuer: the rule of every address Gatehouse sends to (outboundUrl), and no query (discovery appends a path). */
function parseIssuer(raw: string): string {
  const url = outboundUrl(raw.trim(), '{--issuer}', { example: 'https://accounts.google.com', proof: 'the client secret proves who asks instead' });
  if (url.search) throw new AppError('invalid_input', '{--issuer} must have no query');
  return url.href.replace(/\/$/, '');
}

/** An address Gatehouse sends requests to (outboundUrl), with no query or fragment, written without a trailing slash. */
function endpoint(raw: string | undefined, field: string, example: string, o: { query?: boolean } = {}): string {
  if (raw === undefined || raw.trim() === '') throw new AppError('invalid_input', `${field} is required, such as ${example}`);
  if (raw.length > 500) throw new AppError('invalid_input', `${field} must be at most 500 characters`);
  const url = outboundUrl(raw.trim(), field, { example, proof: 'the client secret proves who asks instead' });
  if (url.search && !o.query) throw new AppError('invalid_input', `${field} must have no query`);
  return url.href.replace(/\/$/, '');
}

/** A user-info field: a name, or names joined by dots for a field inside an object (data.id). */
const FIELD = /^[A-Za-z0-9_$-]{1,64}(?:\.[A-Za-z0-9_$-]{1,64}){0,4}$/;
function field(raw: string | undefined, flag: string, fallback: string | null): string | null {
  const value = raw?.trim() || fallback;
  if (value === null) return null;
  if (!FIELD.test(value)) throw new AppError('invalid_input', `${flag} is a user-info field name such as id, or names joined by dots (data.id)`);
  return value;
}

/** GitHub's logins: letters, digits and single dashes, at most 39. Team slugs: lower-case letters, digits, dashes, underscores. */
const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/;
const TEAM_SLUG = /^[A-Za-z0-9_-]{1,100}$/;

function teamGroupOf(raw: string): TeamGroup {
  const m = /^([^/=]+)\/([^/=]+)=(.+)$/.exec(raw.trim());
  if (!m || !GITHUB_LOGIN.test(m[1].trim()) || !TEAM_SLUG.test(m[2].trim())) {
    throw new AppError(
      'invalid_input',
      "{--team-group} is ORG/TEAM=GROUP: a GitHub organisation, a team's slug, and a managed group here (engineering=developers: my-org/engineering=developers)",
    );
  }
  return { org: m[1].trim().toLowerCase(), team: m[2].trim().toLowerCase(), group: parseGroupName(m[3].trim()) };
}

const KINDS: readonly ProviderKind[] = ['oidc', 'github', 'oauth2'];
const DEFAULT_SCOPES: Record<ProviderKind, (input: NewProvider) => string[]> = {
  oidc: () => ['email', 'profile'],
  // GitHub: the profile (the numeric id, the name), the addresses (the primary verified one), and
  // the organisations and teams only when they decide something.
  github: (input) => ['read:user', 'user:email', ...(input.allowedOrg || (input.teamGroups ?? []).length > 0 ? ['read:org'] : [])],
  oauth2: () => [],
};

/** Where it is and the settings of its kind: every rule of each kind's flags. */
function kindParts(kind: ProviderKind, input: NewProvider): { issuer: string; settings: ProviderSettings } {
  const none = (flags: Array<[unknown, string]>) => {
    const given = flags.find(([v]) => v !== undefined && !(Array.isArray(v) && v.length === 0));
    if (given) throw new AppError('invalid_input', `${given[1]} is not a setting of a provider of the kind ${kind}`);
  };
  const githubFlags: Array<[unknown, string]> = [
    [input.url, '{--url}'],
    [input.apiUrl, '{--api-url}'],
    [input.allowedOrg, '{--allowed-org}'],
    [input.teamGroups, '{--team-group}'],
  ];
  const oauth2Flags: Array<[unknown, string]> = [
    [input.authorizationUrl, '{--authorization-url}'],
    [input.tokenUrl, '{--token-url}'],
    [input.userinfoUrl, '{--userinfo-url}'],
    [input.idField, '{--id-field}'],
    [input.emailField, '{--email-field}'],
    [input.emailVerifiedField, '{--email-verified-field}'],
    [input.nameField, '{--name-field}'],
  ];
  if (kind === 'oidc') {
    none([...githubFlags, ...oauth2Flags]);
    return { issuer: parseIssuer(input.issuer ?? ''), settings: {} };
  }
  none([[input.issuer, '{--issuer}']]);
  if (kind === 'github') {
    none(oauth2Flags);
    const url = endpoint(input.url ?? 'https://github.com', '{--url}', 'https://github.example.com');
    const apiUrl = endpoint(
      input.apiUrl ?? (input.url === undefined ? 'https://api.github.com' : undefined),
      '{--api-url}',
      'https://github.example.com/api/v3',
    );
    const org = input.allowedOrg?.trim();
    if (org !== undefined && !GITHUB_LOGIN.test(org))
      throw new AppError('invalid_input', "{--allowed-org} is a GitHub organisation's login (letters, digits, dashes)");
    const teams = (input.teamGroups ?? []).map(teamGroupOf);
    if (teams.length > 50) throw new AppError('invalid_input', '{--team-group} is given at most 50 times');
    const seen = new Set<string>();
    for (const t of teams) {
      if (seen.has(`${t.org}/${t.team}`)) throw new AppError('invalid_input', `{--team-group} names the team ${t.org}/${t.team} twice`);
      seen.add(`${t.org}/${t.team}`);
    }
    const settings: GithubSettings = { api_url: apiUrl, allowed_org: org ? org.toLowerCase() : null, team_groups: teams };
    return { issuer: url, settings };
  }
  none(githubFlags);
  const settings: OAuth2Settings = {
    authorization_url: endpoint(input.authorizationUrl, '{--authorization-url}', 'https://auth.example.com/oauth/authorize', { query: true }),
    token_url: endpoint(input.tokenUrl, '{--token-url}', 'https://auth.example.com/oauth/token'),
    userinfo_url: endpoint(input.userinfoUrl, '{--userinfo-url}', 'https://api.example.com/me', { query: true }),
    id_field: field(input.idField, '{--id-field}', 'id')!,
    email_field: field(input.emailField, '{--email-field}', 'email')!,
    email_verified_field: field(input.emailVerifiedField, '{--email-verified-field}', null),
    name_field: field(input.nameField, '{--name-field}', 'name'),
  };
  return { issuer: settings.authorization_url, settings };
}

/** The row an added provider makes (every rule of the shell's), without its id. */
export function providerRowFor(input: NewProvider): Omit<ProviderRow, 'id' | 'created_at'> {
  const kind = input.kind ?? 'oidc';
  if (!KINDS.includes(kind)) throw new AppError('invalid_input', '{--kind} is oidc, github or oauth2');
  const name = input.name.trim().toLowerCase();
  if (!NAME.test(name)) throw new AppError('invalid_input', '{--name} is 1 to 40 lower-case letters, digits and dashes (it names the callback address)');
  const { issuer, settings } = kindParts(kind, input);
  const clientId = input.clientId.trim();
  if (clientId === '' || clientId.length > 500) throw new AppError('invalid_input', '{--client-id} is required (at most 500 characters)');
  const secret = input.clientSecret.trim();
  if (secret === '' || secret.length > 4096)
    throw new AppError('invalid_input', 'the client secret is empty or too long: give it with {--client-secret-file} or {--client-secret-env}');
  const scopes = [...new Set((input.scopes ?? DEFAULT_SCOPES[kind](input)).map((x) => x.trim()).filter((x) => kind !== 'oidc' || x !== 'openid'))];
  if (scopes.length > 20 || scopes.some((x) => !SCOPE.test(x))) throw new AppError('invalid_input', '{--scope} takes scope names such as email or profile');
  const displayName = (input.displayName ?? (kind === 'github' && input.name.trim().toLowerCase() === 'github' ? 'GitHub' : name)).trim();
  // eslint-disable-next-line no-control-regex
  if (displayName === '' || [...displayName].length > 100 || /[\u0000-\u001f\u007f]/.test(displayName)) {
    throw new AppError('invalid_input', '{--display-name} is at most 100 characters, no control characters');
  }
  return {
    name,
    display_name: displayName,
    issuer,
    client_id: clientId,
    client_secret: secret,
    scopes: JSON.stringify(scopes),
    trust_email: input.trustEmail === true,
    kind,
    settings: JSON.stringify(settings),
  };
}

/** A GitHub provider's teams go into managed groups (never users or administrators): each must exist. */
export async function assertTeamGroups(tx: Tx, row: Pick<ProviderRow, 'kind' | 'settings'>, field = '{--team-group}'): Promise<void> {
  if (row.kind !== 'github') return;
  for (const t of githubSettings(row).team_groups) {
    if (!(await managedGroupNamed(tx, t.group))) {
      throw new AppError('invalid_input', `${field}: there is no managed group named ${t.group} (make it first with group create)`);
    }
  }
}

export async function addProvider(s: Services, actor: Actor, input: NewProvider): Promise<ProviderView> {
  requireAdministrator(actor, 'add sign-in providers');
  const wanted = providerRowFor(input);
  const row = await s.store.transaction(async (tx) => {
    await assertTeamGroups(tx, wanted);
    return insertProvider(tx, wanted);
  });
  await s.audit.record('provider_added', actor, { account: null, provider: row.name, issuer: row.issuer });
  return viewProvider(s, row);
}

export async function providerByName(s: Services, name: string): Promise<ProviderRow> {
  const row = await findProvider(s.store.root, name.trim().toLowerCase());
  if (!row) throw new AppError('not_found', `no provider named ${name.trim().slice(0, 40)}`);
  return row;
}

export async function listProviderViews(s: Services, actor: Actor): Promise<ProviderView[]> {
  requireAdministrator(actor, 'list sign-in providers');
  return Promise.all((await listProviders(s.store.root)).map((p) => viewProvider(s, p)));
}

export async function showProvider(s: Services, actor: Actor, name: string): Promise<ProviderView> {
  requireAdministrator(actor, 'read sign-in providers');
  return viewProvider(s, await providerByName(s, name));
}

/**
 * Removes a provider and every identity linked through it (accounts keep their other ways in).
 * Refused while some account has no other way in, unless `force` (they then need a reset link).
 */
export async function removeProvider(s: Services, actor: Actor, name: string, force = false): Promise<ProviderView> {
  requireAdministrator(actor, 'remove sign-in providers');
  const row = await providerByName(s, name);
  const view = await viewProvider(s, row);
  await unlessManaged(s.store, actor.via, 'provider', row.name, async (tx) => {
    // Counted in the removing transaction: an identity linked meanwhile is counted too.
    const locked = await stranded(tx, row.id);
    if (locked > 0 && !force) {
      throw new AppError(
        'last_credential',
        `${locked} account${locked === 1 ? ' signs' : 's sign'} in only through ${row.name}: removing it would lock ${locked === 1 ? 'it' : 'them'} out ({--force} removes it anyway; a password reset link lets them back in)`,
      );
    }
    await deleteProvider(tx, row.id);
  });
  await s.audit.record('provider_removed', actor, { account: null, provider: row.name, identities: view.linked_identities });
  return view;
}

/** The buttons of the sign-in page: every provider's name and display name (no secret, no id). */
export async function providerButtons(s: Services): Promise<Array<{ name: string; display_name: string }>> {
  return (await listProviders(s.store.root)).map((p) => ({ name: p.name, display_name: p.display_name }));
}
