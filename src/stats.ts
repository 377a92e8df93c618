/** Figures for GET /statistics and `gatehouse stats`: counts from the store, none of its secrets. */
import type { Services } from './services';
import { keys } from './runtime/limiter';
import { signupStatus } from './accounts/signup-status';
import { schemaStatus } from './store/connection';
import { countLockedAccounts } from './store/counters';
import { accountCounts, poolStats, storeBytes } from './store/stats';

export async function accountStats(s: Services) {
  const limits = s.config;
  const [c, locked] = await Promise.all([
    accountCounts(s.store.root),
    // Accounts locked everywhere: failed signins from all addresses reached the ceiling in the current window.
    countLockedAccounts(s.store.root, keys.signinEmail(''), limits.signinFailuresPerAccountTotal, limits.limitWindow * 1000),
  ]);
  return {
    total: c.total,
    administrators: c.administrators,
    with_totp: c.withTotp,
    with_passkeys: c.withPasskeys,
    without_password: c.withoutPassword,
    unverified: c.unverified,
    disabled: c.disabled,
    locked,
    groups: c.groups,
    /** People by where they came from: `local` (made here), or the import that made them. */
    by_origin: c.byOrigin,
  };
}

export async function dbStats(s: Services) {
  const version = await schemaStatus(s.store.root);
  return { dialect: s.store.dialect, schema_version: version.current, schema_latest: version.latest, pool: poolStats(s.store) };
}

/** What `gatehouse stats` prints. */
export async function storeStats(s: Services) {
  const [accounts, signup, version, bytes] = await Promise.all([
    accountStats(s),
    signupStatus(s.store.root),
    schemaStatus(s.store.root),
    storeBytes(s.store, s.config.dataDir),
  ]);
  return {
    accounts: accounts.total,
    administrators: accounts.administrators,
    groups: accounts.groups,
    with_totp: accounts.with_totp,
    with_passkeys: accounts.with_passkeys,
    without_password: accounts.without_password,
    unverified: accounts.unverified,
    disabled: accounts.disabled,
    locked: accounts.locked,
    by_origin: accounts.by_origin,
    signup: { open: signup.open, closed_by: signup.closedBy },
    store: { dialect: s.store.dialect, location: s.store.location, bytes, schema_version: version.current, schema_latest: version.latest },
  };
}
