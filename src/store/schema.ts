/**
 * Every column of every table with its JavaScript type, declared once. `decodeRow` turns a
 * driver row into those types, so SQLite (0/1 booleans, numbers) and PostgreSQL (true/false,
 * bigint as strings) give the same values by declaration, never by guessing from a name.
 * A test reads every column of every table on both dialects and holds them to this map.
 */
import type { Row } from './handle';

export type ColumnType = 'int' | 'text' | 'bool' | 'time';

const RECORD = { id: 'int', reference_id: 'text', permission: 'int', user_account_id: 'int', created_at: 'time', updated_at: 'time' } as const;

export const SCHEMA = {
  user_account: {
    ...RECORD,
    email: 'text',
    username: 'text',
    email_key: 'text',
    email_skeleton: 'text',
    name: 'text',
    password: 'text',
    auth_version: 'int',
    disabled: 'bool',
    email_verified: 'bool',
    totp_secret: 'text',
    totp_enabled: 'bool',
    totp_last_step: 'int',
    external_id: 'text',
    origin: 'text',
  },
  usergroup: { ...RECORD, name: 'text', system_role: 'text', external_id: 'text' },
  membership: { ...RECORD, account_id: 'int', usergroup_id: 'int' },
  usergroup_nesting: { parent_id: 'int', child_id: 'int', created_at: 'time' },
  usergroup_closure: { ancestor_id: 'int', descendant_id: 'int' },
  config_managed: { kind: 'text', name: 'text', file: 'text', applied_at: 'time', made: 'bool', refs: 'text' },
  world: { ...RECORD, table_name: 'text', default_permission: 'int' },
  action: { ...RECORD, on_type: 'text', action_name: 'text', label: 'text' },
  record_usergroup: { id: 'int', record_type: 'text', record_id: 'int', usergroup_id: 'int' },
  gatehouse_setting: { name: 'text', value: 'text' },
  write_lock: { name: 'text', counter: 'int' },
  account_token: {
    id: 'int',
    account_id: 'int',
    purpose: 'text',
    token_hash: 'text',
    email_key: 'text',
    expires_at: 'time',
    used_at: 'time',
    created_at: 'time',
    session_id: 'text',
  },
  rate_counter: { counter_key: 'text', window_start: 'time', hits: 'int' },
  known_signin: { account_id: 'int', signin_key: 'text', last_at: 'time' },
  recovery_code: { id: 'int', account_id: 'int', code_hash: 'text', used_at: 'time', created_at: 'time' },
  signing_key: {
    kid: 'text',
    alg: 'text',
    private_key: 'text',
    public_jwk: 'text',
    created_at: 'time',
    retired_at: 'time',
    verify_until: 'time',
    max_token_ttl: 'int',
  },
  session: {
    id: 'text',
    account_id: 'int',
    auth_version: 'int',
    created_at: 'time',
    last_used_at: 'time',
    expires_at: 'time',
    ended_at: 'time',
    client: 'text',
    user_agent: 'text',
    two_factor: 'bool',
    method: 'text',
    authenticated_at: 'time',
    upstream_amr: 'text',
    second_factor: 'text',
  },
  passkey: {
    id: 'int',
    reference_id: 'text',
    account_id: 'int',
    credential_id: 'text',
    public_key: 'text',
    counter: 'int',
    transports: 'text',
    name: 'text',
    backed_up: 'bool',
    created_at: 'time',
    last_used_at: 'time',
  },
  invitation: {
    id: 'int',
    reference_id: 'text',
    email: 'text',
    email_key: 'text',
    token_hash: 'text',
    groups: 'text',
    administrator: 'bool',
    created_by: 'int',
    created_at: 'time',
    expires_at: 'time',
    used_at: 'time',
    revoked_at: 'time',
    account_id: 'int',
  },
  upstream_provider: {
    id: 'int',
    name: 'text',
    display_name: 'text',
    issuer: 'text',
    client_id: 'text',
    client_secret: 'text',
    scopes: 'text',
    trust_email: 'bool',
    created_at: 'time',
  },
  linked_identity: {
    id: 'int',
    reference_id: 'text',
    account_id: 'int',
    provider_id: 'int',
    subject: 'text',
    email: 'text',
    created_at: 'time',
    last_used_at: 'time',
  },
  upstream_flow: {
    state_hash: 'text',
    provider_id: 'int',
    binding: 'text',
    nonce: 'text',
    code_verifier: 'text',
    purpose: 'text',
    account_id: 'int',
    carry: 'text',
    expires_at: 'time',
  },
  app_password: { id: 'int', reference_id: 'text', account_id: 'int', name: 'text', secret_hash: 'text', created_at: 'time', last_used_at: 'time' },
  api_key: {
    id: 'int',
    reference_id: 'text',
    account_id: 'int',
    name: 'text',
    secret_hash: 'text',
    auth_version: 'int',
    created_at: 'time',
    expires_at: 'time',
    last_used_at: 'time',
  },
  webhook: { id: 'int', reference_id: 'text', url: 'text', description: 'text', events: 'text', secret: 'text', created_at: 'time' },
  scim_target: { id: 'int', reference_id: 'text', name: 'text', url: 'text', token: 'text', groups: 'text', created_at: 'time' },
  scim_pushed: { target_id: 'int', reference_id: 'text', kind: 'text', remote_id: 'text' },
  delivery: {
    id: 'int',
    message_id: 'text',
    kind: 'text',
    webhook_id: 'int',
    scim_target_id: 'int',
    topic: 'text',
    payload: 'text',
    state: 'text',
    attempts: 'int',
    next_at: 'time',
    claimed_by: 'text',
    last_error: 'text',
    created_at: 'time',
    done_at: 'time',
  },
  webauthn_challenge: { challenge: 'text', purpose: 'text', account_id: 'int', pending: 'text', expires_at: 'time' },
  refresh_token: { token_hash: 'text', session_id: 'text', created_at: 'time', spent_at: 'time' },
  oidc_payload: {
    model: 'text',
    id: 'text',
    payload: 'text',
    grant_id: 'text',
    uid: 'text',
    client_id: 'text',
    account: 'text',
    auth_version: 'int',
    expires_at: 'time',
    consumed_at: 'time',
    user_code: 'text',
  },
  oidc_client: {
    client_id: 'text',
    name: 'text',
    metadata: 'text',
    client_secret: 'text',
    first_party: 'bool',
    allowed_groups: 'text',
    created_at: 'time',
    two_factor: 'bool',
  },
  scim_token: { id: 'text', name: 'text', token_hash: 'text', created_at: 'time', last_used_at: 'time', revoked_at: 'time' },
  saml_key: { kid: 'text', private_key: 'text', certificate: 'text', status: 'text', created_at: 'time' },
  saml_sp: {
    id: 'text',
    entity_id: 'text',
    name: 'text',
    acs: 'text',
    slo: 'text',
    certificate: 'text',
    authn_requests_signed: 'bool',
    nameid: 'text',
    allowed_groups: 'text',
    created_at: 'time',
    two_factor: 'bool',
  },
  saml_request: {
    handle: 'text',
    sp_id: 'text',
    request_id: 'text',
    acs_url: 'text',
    relay_state: 'text',
    force_authn: 'bool',
    created_at: 'time',
    expires_at: 'time',
    answered_at: 'time',
  },
  saml_signin: { session_id: 'text', sp_id: 'text', name_id: 'text', session_index: 'text', created_at: 'time' },
  saml_logout_request: { sp_id: 'text', request_id: 'text', expires_at: 'time' },
  oidc_signin: { session_id: 'text', client_id: 'text', created_at: 'time' },
  forward_app: {
    id: 'int',
    reference_id: 'text',
    host: 'text',
    paths: 'text',
    allowed_groups: 'text',
    bypass_paths: 'text',
    two_factor: 'bool',
    created_at: 'time',
  },
  audit_event: { id: 'int', created_at: 'time', event: 'text', account: 'text', client: 'text', details: 'text' },
  directory_source: {
    id: 'int',
    name: 'text',
    url: 'text',
    start_tls: 'bool',
    ca_certificate: 'text',
    bind_dn: 'text',
    bind_password: 'text',
    base_dn: 'text',
    user_filter: 'text',
    group_filter: 'text',
    uid_attribute: 'text',
    id_attribute: 'text',
    every_seconds: 'int',
    keep_passwords: 'bool',
    next_sync_at: 'time',
    last_sync_at: 'time',
    last_status: 'text',
    last_result: 'text',
    created_at: 'time',
  },
  source_entry: {
    id: 'int',
    source_id: 'int',
    kind: 'text',
    entry_id: 'text',
    dn: 'text',
    account_id: 'int',
    usergroup_id: 'int',
    gone_at: 'time',
    first_signin_at: 'time',
  },
} as const satisfies Record<string, Record<string, ColumnType>>;

export type TableName = keyof typeof SCHEMA;
export const TABLES = Object.keys(SCHEMA) as TableName[];

function decodeValue(type: ColumnType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'int':
    case 'time':
      return Number(v);
    case 'bool':
      return v === true || v === 1 || v === '1' || v === 't';
    case 'text':
      return String(v);
  }
}

/** A driver row of `table` in the declared types (columns not selected stay absent). */
export function decodeRow<T>(table: TableName, raw: Row): T {
  const columns: Record<string, ColumnType> = SCHEMA[table];
  const out: Row = {};
  for (const [k, v] of Object.entries(raw)) {
    const type = columns[k];
    if (type === undefined) throw new Error(`column ${table}.${k} is not declared in store/schema.ts`);
    out[k] = decodeValue(type, v);
  }
  return out as T;
}
