/** Upstream OpenID Connect providers, the identities linked to accounts, and sign-ins in flight. */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors';
import { isUniqueViolation, op } from './handle';
import { decodeRow } from './schema';
import { NO_PASSWORD } from './accounts';

export interface ProviderRow {
  id: number;
  name: string;
  display_name: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  scopes: string;
  trust_email: boolean;
  created_at: number;
  /** `oidc`, `github` or `oauth2`. */
  kind: ProviderKind;
  /** JSON: the settings of its kind (upstream/providers.ts ProviderSettings); `{}` for `oidc`. */
  settings: string;
}

export type ProviderKind = 'oidc' | 'github' | 'oauth2';

export interface IdentityRow {
  id: number;
  reference_id: string;
  account_id: number;
  provider_id: number;
  subject: string;
  email: string | null;
  created_at: number;
  last_used_at: number | null;
}

export type FlowPurpose = 'signin' | 'link' | 'totp';

export interface FlowRow {
  state_hash: string;
  provider_id: number;
  binding: string;
  nonce: string;
  code_verifier: string;
  purpose: FlowPurpose;
  account_id: number | null;
  carry: string;
  expires_at: number;
}

export const insertProvider = op(async (h, p: Omit<ProviderRow, 'id' | 'created_at'>): Promise<ProviderRow> => {
  try {
    await h.k('upstream_provider').insert({ ...p, created_at: h.clock.now() });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('name_taken', `a provider named ${p.name} exists already`);
    throw err;
  }
  return decodeRow<ProviderRow>('upstream_provider', (await h.k('upstream_provider').where({ name: p.name }).first()) as Record<string, unknown>);
});

export const findProvider = op(async (h, name: string): Promise<ProviderRow | undefined> => {
  const row = await h.k('upstream_provider').where({ name }).first();
  return row ? decodeRow<ProviderRow>('upstream_provider', row) : undefined;
});

export const findProviderById = op(async (h, id: number): Promise<ProviderRow | undefined> => {
  const row = await h.k('upstream_provider').where({ id }).first();
  return row ? decodeRow<ProviderRow>('upstream_provider', row) : undefined;
});

export const listProviders = op(async (h): Promise<ProviderRow[]> =>
  (await h.k('upstream_provider').orderBy('name')).map((r: Record<string, unknown>) => decodeRow<ProviderRow>('upstream_provider', r)),
);

/** Replaces what a provider holds (a configuration file's apply); its id and name stay. */
export const updateProvider = op(
  async (h, id: number, row: Omit<ProviderRow, 'id' | 'name' | 'created_at'>): Promise<boolean> =>
    (await h.k('upstream_provider').where({ id }).update(row)) === 1,
);

export const deleteProvider = op(async (h, id: number): Promise<boolean> => (await h.k('upstream_provider').where({ id }).del()) === 1);

export const countIdentitiesOf = op(async (h, providerId: number): Promise<number> =>
  Number((await h.k('linked_identity').where({ provider_id: providerId }).count({ n: '*' }).first())?.n ?? 0),
);

export const findIdentity = op(async (h, providerId: number, subject: string): Promise<IdentityRow | undefined> => {
  const row = await h.k('linked_identity').where({ provider_id: providerId, subject }).first();
  return row ? decodeRow<IdentityRow>('linked_identity', row) : undefined;
});

export const identitiesOf = op(async (h, accountId: number): Promise<Array<IdentityRow & { provider: string; display_name: string }>> => {
  const rows = await h
    .k('linked_identity as i')
    .join('upstream_provider as p', 'p.id', 'i.provider_id')
    .where('i.account_id', accountId)
    .orderBy('i.id')
    .select('i.*', 'p.name as provider', 'p.display_name as display_name');
  return rows.map(({ provider, display_name, ...r }: Record<string, unknown>) => ({
    ...decodeRow<IdentityRow>('linked_identity', r),
    provider: String(provider),
    display_name: String(display_name),
  }));
});

export const insertIdentity = op(async (h, i: Pick<IdentityRow, 'account_id' | 'provider_id' | 'subject' | 'email'>): Promise<IdentityRow> => {
  const row = { ...i, reference_id: randomUUID(), created_at: h.clock.now(), last_used_at: h.clock.now() };
  try {
    await h.k('linked_identity').insert(row);
  } catch (err) {
    // One identity, one account: a race of two links is decided by the unique index.
    if (isUniqueViolation(err)) throw new AppError('conflict', 'this identity is linked to an account already');
    throw err;
  }
  return decodeRow<IdentityRow>('linked_identity', (await h.k('linked_identity').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
});

export const touchIdentity = op(async (h, id: number): Promise<void> => {
  await h.k('linked_identity').where({ id }).update({ last_used_at: h.clock.now() });
});

export const deleteIdentity = op(async (h, accountId: number, referenceId: string): Promise<boolean> => {
  return (await h.k('linked_identity').where({ account_id: accountId, reference_id: referenceId }).del()) === 1;
});

export const countIdentities = op(async (h, accountId: number): Promise<number> =>
  Number((await h.k('linked_identity').where({ account_id: accountId }).count({ n: '*' }).first())?.n ?? 0),
);

export const insertFlow = op(async (h, row: FlowRow): Promise<void> => {
  await h.k('upstream_flow').where('expires_at', '<=', h.clock.now()).del();
  await h.k('upstream_flow').insert(row);
});

/** Spends a flow: the one caller that deletes it gets it (a replayed state finds nothing). */
export const spendFlow = op(async (h, stateHash: string): Promise<FlowRow | undefined> => {
  const raw = await h.k('upstream_flow').where({ state_hash: stateHash }).first();
  if (!raw) return undefined;
  if ((await h.k('upstream_flow').where({ state_hash: stateHash }).del()) !== 1) return undefined;
  const row = decodeRow<FlowRow>('upstream_flow', raw);
  return row.expires_at > h.clock.now() ? row : undefined;
});

export const countLiveFlows = op(async (h): Promise<number> =>
  Number((await h.k('upstream_flow').where('expires_at', '>', h.clock.now()).count({ n: '*' }).first())?.n ?? 0),
);

/** Accounts whose only way in is an identity of this provider (no password, no passkey, no other linked sign-in). */
export const stranded = op(async (h, providerId: number): Promise<number> => {
  const [row] = await h.all(
    `SELECT COUNT(*) AS n FROM linked_identity i JOIN user_account a ON a.id = i.account_id
     WHERE i.provider_id = ? AND a.password = ?
       AND NOT EXISTS (SELECT 1 FROM passkey p WHERE p.account_id = a.id)
       AND NOT EXISTS (SELECT 1 FROM linked_identity o WHERE o.account_id = a.id AND o.provider_id <> ?)`,
    [providerId, NO_PASSWORD, providerId],
  );
  return Number(row?.n ?? 0);
});
