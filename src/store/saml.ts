/** The SAML identity provider's signing keys, service providers, sign-ins in progress, the sign-ins each session made, and logout requests answered. */
import { atomically, type Handle, isUniqueViolation, op, type Tx } from './handle';
import { decodeRow } from './schema';
import { sharedSecret } from './keys';

export interface SamlKeyRow {
  kid: string;
  private_key: string;
  certificate: string;
  status: 'current' | 'next';
  created_at: number;
}

export interface SamlSpRow {
  id: string;
  entity_id: string;
  name: string;
  acs: string;
  slo: string;
  certificate: string | null;
  authn_requests_signed: boolean;
  nameid: string;
  allowed_groups: string;
  created_at: number;
  /** Every sign-in to it stands on two factors (a single-factor session is asked for its second). */
  two_factor: boolean;
}

export interface SamlRequestRow {
  handle: string;
  sp_id: string;
  request_id: string;
  acs_url: string;
  relay_state: string | null;
  force_authn: boolean;
  created_at: number;
  expires_at: number;
  answered_at: number | null;
}

const lockKeys = (h: Handle) =>
  h
    .k('write_lock')
    .where({ name: 'saml_keys' })
    .update({ counter: h.k.raw('counter + 1') });

/** The current key first, then the next one (if any): 'current' sorts before 'next'. */
export const listSamlKeys = op(async (h): Promise<SamlKeyRow[]> => {
  const rows = await h.k('saml_key').orderBy([{ column: 'status', order: 'asc' }]);
  return rows.map((r: Record<string, unknown>) => decodeRow<SamlKeyRow>('saml_key', r));
});

/** Stores `key` as the current key unless one exists (instances starting together make one). */
export const insertFirstSamlKey = op((root, key: Omit<SamlKeyRow, 'status' | 'created_at'>) =>
  atomically(root, async (h): Promise<void> => {
    await lockKeys(h);
    if (await h.k('saml_key').where({ status: 'current' }).first('kid')) return;
    await h.k('saml_key').insert({ ...key, status: 'current', created_at: h.clock.now() });
  }),
);

/** Adds `key` as the next key; false if there is one already (retire the current one first). */
export const insertNextSamlKey = op((root, key: Omit<SamlKeyRow, 'status' | 'created_at'>) =>
  atomically(root, async (h): Promise<boolean> => {
    await lockKeys(h);
    if (await h.k('saml_key').where({ status: 'next' }).first('kid')) return false;
    await h.k('saml_key').insert({ ...key, status: 'next', created_at: h.clock.now() });
    return true;
  }),
);

/** The current key is deleted and the next one signs from now on; the retired kid, or null without a next key. */
export const retireSamlKey = op((root) =>
  atomically(root, async (h): Promise<{ retired: string; current: string } | null> => {
    await lockKeys(h);
    const next = await h.k('saml_key').where({ status: 'next' }).first('kid');
    const current = await h.k('saml_key').where({ status: 'current' }).first('kid');
    if (!next || !current) return null;
    await h.k('saml_key').where({ kid: current.kid }).del();
    await h.k('saml_key').where({ kid: next.kid }).update({ status: 'current' });
    return { retired: String(current.kid), current: String(next.kid) };
  }),
);

/** The secret behind persistent NameIDs (per-SP pseudonyms): made once, shared by all instances, never changed. */
export const samlPseudonymKey = (tx: Tx): Promise<string> => sharedSecret(tx, 'saml_pseudonym_key');

/** Adds a service provider; false when its entity id is registered already. */
export const insertSamlSp = op(async (h, row: Omit<SamlSpRow, 'created_at'>): Promise<boolean> => {
  try {
    await h.k('saml_sp').insert({ ...row, created_at: h.clock.now() });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
});

export const findSamlSp = op(async (h, where: { id: string } | { entity_id: string }): Promise<SamlSpRow | undefined> => {
  const row = await h.k('saml_sp').where(where).first();
  return row ? decodeRow<SamlSpRow>('saml_sp', row) : undefined;
});

export const listSamlSps = op(async (h): Promise<SamlSpRow[]> => {
  const rows = await h.k('saml_sp').orderBy([
    { column: 'created_at', order: 'asc' },
    { column: 'id', order: 'asc' },
  ]);
  return rows.map((r: Record<string, unknown>) => decodeRow<SamlSpRow>('saml_sp', r));
});

/** Whether sign-ins to a service provider need two factors. */
export const setSamlSpTwoFactor = op(
  async (h, id: string, twoFactor: boolean): Promise<boolean> => (await h.k('saml_sp').where({ id }).update({ two_factor: twoFactor })) > 0,
);

/** Replaces what a registration holds (a configuration file's apply); its id and entity id stay. */
export const updateSamlSp = op(
  async (h, id: string, row: Omit<SamlSpRow, 'id' | 'entity_id' | 'created_at'>): Promise<boolean> => (await h.k('saml_sp').where({ id }).update(row)) > 0,
);

export const deleteSamlSp = op(async (h, id: string): Promise<boolean> => (await h.k('saml_sp').where({ id }).del()) > 0);

/** Keeps a sign-in in progress; false when this SP already sent a request with that ID (a replay). */
export const insertSamlRequest = op(async (h, row: Omit<SamlRequestRow, 'answered_at' | 'created_at'>): Promise<boolean> => {
  // An expired request's ID may come back only after its row is gone: a replay within the
  // window is refused, and the window is the request's own lifetime.
  try {
    await h.k('saml_request').insert({ ...row, created_at: h.clock.now(), answered_at: null });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
});

/** A sign-in in progress that is neither answered nor expired. */
export const findSamlRequest = op(async (h, handle: string): Promise<SamlRequestRow | undefined> => {
  const row = await h.k('saml_request').where({ handle }).whereNull('answered_at').where('expires_at', '>', h.clock.now()).first();
  return row ? decodeRow<SamlRequestRow>('saml_request', row) : undefined;
});

/** Marks the sign-in answered; false when another request (or instance) answered it first. */
export const answerSamlRequest = op(async (h, handle: string): Promise<boolean> => {
  const n = await h.k('saml_request').where({ handle }).whereNull('answered_at').where('expires_at', '>', h.clock.now()).update({ answered_at: h.clock.now() });
  return n > 0;
});

/** Forgets requests (sign-ins and logouts) past their lifetime (their IDs may no longer be replayed: they would be too old). */
export const pruneSamlRequests = op(async (h): Promise<number> => {
  const now = h.clock.now();
  const requests = await h.k('saml_request').where('expires_at', '<=', now).del();
  return requests + (await h.k('saml_logout_request').where('expires_at', '<=', now).del());
});

/** A Response this session sent to an SP: the NameID and SessionIndex a LogoutRequest from it must name. */
export const recordSamlSignin = op(async (h, row: { session_id: string; sp_id: string; name_id: string; session_index: string }): Promise<void> => {
  await h
    .k('saml_signin')
    .insert({ ...row, created_at: h.clock.now() })
    .onConflict(['session_id', 'sp_id', 'name_id'])
    .ignore();
});

/** True when this open session signed in to the SP as `nameId` with this SessionIndex. */
export const hasSamlSignin = op(async (h, where: { session_id: string; sp_id: string; name_id: string; session_index: string }): Promise<boolean> => {
  const row = await h
    .k('saml_signin')
    .join('session', 'session.id', 'saml_signin.session_id')
    .where({
      'saml_signin.session_id': where.session_id,
      'saml_signin.sp_id': where.sp_id,
      'saml_signin.name_id': where.name_id,
      'saml_signin.session_index': where.session_index,
    })
    .whereNull('session.ended_at')
    .first('saml_signin.sp_id');
  return row !== undefined;
});

/**
 * Records a LogoutRequest's ID; false when this SP's request with that ID was recorded already (a
 * replay). The insert decides, on its unique key: of the same request sent twice at once, one wins.
 */
export const useSamlLogoutId = op(async (h, row: { sp_id: string; request_id: string; expires_at: number }): Promise<boolean> => {
  try {
    await h.k('saml_logout_request').insert(row);
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
});
