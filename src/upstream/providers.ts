/**
 * Upstream providers as the operator manages them (contract section 14): any OpenID Connect
 * provider with discovery (Google, Microsoft, GitLab, Keycloak, Authentik, another Gatehouse).
 * The client secret comes from a file or the environment (never the command line), lives in the
 * store, and is never shown again.
 */
import { AppError } from '../errors';
import { iso } from '../clock';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { unlessManaged } from '../managed/managed-by';
import { countIdentitiesOf, deleteProvider, findProvider, insertProvider, listProviders, type ProviderRow, stranded } from '../store/upstream';
import { outboundUrl } from '../runtime/targets';

export interface NewProvider {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes?: readonly string[];
  displayName?: string;
  trustEmail?: boolean;
}

export interface ProviderView {
  name: string;
  display_name: string;
  issuer: string;
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
    name: p.name,
    display_name: p.display_name,
    issuer: p.issuer,
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

/** The row an added provider makes (every rule of the shell's), without its id. */
export function providerRowFor(input: NewProvider): Omit<ProviderRow, 'id' | 'created_at'> {
  const name = input.name.trim().toLowerCase();
  if (!NAME.test(name)) throw new AppError('invalid_input', '{--name} is 1 to 40 lower-case letters, digits and dashes (it names the callback address)');
  const issuer = parseIssuer(input.issuer);
  const clientId = input.clientId.trim();
  if (clientId === '' || clientId.length > 500) throw new AppError('invalid_input', '{--client-id} is required (at most 500 characters)');
  const secret = input.clientSecret.trim();
  if (secret === '' || secret.length > 4096)
    throw new AppError('invalid_input', 'the client secret is empty or too long: give it with {--client-secret-file} or {--client-secret-env}');
  const scopes = [...new Set((input.scopes ?? ['email', 'profile']).map((x) => x.trim()).filter((x) => x !== 'openid'))];
  if (scopes.length > 20 || scopes.some((x) => !SCOPE.test(x))) throw new AppError('invalid_input', '{--scope} takes scope names such as email or profile');
  const displayName = (input.displayName ?? name).trim();
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
  };
}

export async function addProvider(s: Services, actor: Actor, input: NewProvider): Promise<ProviderView> {
  requireAdministrator(actor, 'add sign-in providers');
  const row = await insertProvider(s.store.root, providerRowFor(input));
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
