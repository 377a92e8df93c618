/** Row shapes and the conversions that make SQLite and PostgreSQL rows look alike. */
export interface AccountRow {
  id: number;
  reference_id: string;
  email: string;
  email_key: string;
  name: string;
  password: string;
  permission: number;
  user_account_id: number | null;
  auth_version: number;
  disabled: boolean;
  email_verified: boolean;
  totp_secret: string | null;
  totp_enabled: boolean;
  totp_last_step: number | null;
  created_at: number;
  updated_at: number;
}

export interface ActionRow {
  id: number;
  reference_id: string;
  on_type: string;
  action_name: string;
  label: string;
  permission: number;
  user_account_id: number | null;
  created_at: number;
  updated_at: number;
}

/** PostgreSQL returns bigint as string and booleans as booleans; SQLite returns 0/1. */
export function normalizeRow<T>(raw: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === null || v === undefined) out[k] = null;
    else if (k.endsWith('_at') || k === 'totp_last_step' || k === 'counter' || k === 'window_start') out[k] = Number(v);
    else if (k === 'disabled' || k === 'email_verified' || k === 'totp_enabled') out[k] = v === true || v === 1 || v === '1';
    else out[k] = v;
  }
  return out as T;
}
