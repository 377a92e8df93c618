/**
 * What operators read about a running server and its store: the audit trail, statistics,
 * metrics, readiness, the schema, and the periodic clean-up of old rows.
 */
import { pruneSamlRequests } from './store/saml';
import { createHash, timingSafeEqual } from 'node:crypto';
import { statfs } from 'node:fs/promises';
import type { Actor, Caller } from './actor';
import type { AuthCounters, Services } from './services';
import { actorOf, requireAdministrator } from './access/caller';
import { KNOWN_SIGNIN_MS } from './runtime/limiter';
import { findAccountByEmail } from './accounts/lifecycle';
import { signupStatus, SignupCheck } from './accounts/signup-status';
import { SESSION_IDLE_MS } from './accounts/sessions';
import type { AuditFilter, AuditRow } from './store/audit';
import { schemaStatus, SchemaStatus } from './store/connection';
import { prune as pruneCounters, pruneKnownSignins } from './store/counters';
import { pruneTokens } from './store/account-tokens';
import { pruneLegacySecret, pruneSigningKeys } from './store/keys';
import { pruneSessions } from './store/sessions';
import { prunePayloads } from './store/oidc';
import { pruneDeliveries, queueFigures } from './store/deliveries';
import type { DeliveryCounts } from './runtime/sender';
import { filterIndexed, poolStats, storeWritable } from './store/stats';
import { administratorExists } from './store/accounts';
import { accountStats, dbStats, storeStats } from './stats';

/** The counters since start (AuthCounters, declared once in services.ts), and the figures read at the moment. */
export interface MetricsSnapshot extends AuthCounters {
  hashesQueued: number;
  hashesRunning: number;
  hashesDone: number;
  /** The store's connection pool (null where the driver keeps none). */
  pool: { used: number; free: number; pending: number } | null;
  /** Tries by this server since start, by kind (mail, webhook) and outcome (delivered, retried, failed). */
  deliveries: DeliveryCounts;
  /** The queue in the store: messages pending and failed, the oldest pending one's age. */
  queue: { pending: number; failed: number; oldestPendingSeconds: number };
}

export interface OperatorOperations {
  readonly audit: {
    query(actor: Actor, filter: AuditFilter & { accountEmail?: string }): Promise<AuditRow[]>;
  };
  /** What the store holds, whether guest signup is open and what closes it, its schema and size. */
  stats(actor: Actor): Promise<Awaited<ReturnType<typeof storeStats>>>;
  /** The core's part of GET /statistics (administrators only unless --public-statistics). */
  statistics(caller: Caller): Promise<Record<string, unknown>>;
  /** True when the store can take a write within `timeoutMs` (GET /health/ready). */
  ready(timeoutMs: number): Promise<boolean>;
  /**
   * Figures for GET /metrics: to administrators, to the bearer of --metrics-token-file's token,
   * or to everyone with --public-metrics.
   */
  metrics(caller: Caller): Promise<MetricsSnapshot>;
  signupStatus(): Promise<{ open: boolean; closedBy: SignupCheck | null }>;
  /** Whether the store has an administrator (the start-up message for a person says so). */
  hasAdministrator(): Promise<boolean>;
  /** Whether filter= on accounts and groups is served by trigram indexes (not a scan). */
  filterIndexed(): Promise<boolean>;
  schema(): Promise<SchemaStatus>;
  /** Drops old counters and long-expired tokens (a running server calls it periodically). */
  prune(): Promise<void>;
}

const KEEP_COUNTERS_MS = 24 * 60 * 60 * 1000;
/** Delivered messages stay listed a week (deliveries --all); failed ones a month, for the operator. */
const KEEP_DELIVERED_MS = 7 * KEEP_COUNTERS_MS;
const KEEP_FAILED_MS = 30 * KEEP_COUNTERS_MS;
/** Withdrawn keys stay listed (as retired) this long. */
const KEEP_RETIRED_KEYS_MS = 30 * 24 * 60 * 60 * 1000;

/** The metrics token, compared in constant time (digests of equal length). */
function tokenIs(given: string | null, expected: string): boolean {
  if (given === null) return false;
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export function operatorOperations(s: Services): OperatorOperations {
  const root = s.store.root;
  return {
    audit: {
      async query(actor, filter) {
        requireAdministrator(actor, 'read the audit trail');
        const account = filter.accountEmail === undefined ? filter.account : (await findAccountByEmail(s, filter.accountEmail)).reference_id;
        return s.audit.query({ since: filter.since, limit: filter.limit, account, event: filter.event });
      },
    },
    async stats(actor) {
      requireAdministrator(actor, 'read statistics');
      return storeStats(s);
    },
    async statistics(caller) {
      if (!s.config.publicStatistics) requireAdministrator(await actorOf(s, caller), 'read statistics');
      const [accounts, db] = await Promise.all([accountStats(s), dbStats(s)]);
      return {
        db,
        accounts,
        auth: {
          signins_ok: s.counters.signinsOk,
          signins_failed: s.counters.signinsFailed,
          signups: s.counters.signups,
          hashes_queued: s.passwords.queued,
          hashes_running: s.passwords.running,
        },
      };
    },
    async ready(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      try {
        return await Promise.race([
          // Ready means a write can happen now (contract section 10), not only a read; on SQLite,
          // with room on its disk for more than this one (a full disk takes small updates in place).
          Promise.all([storeWritable(root), s.store.dialect === 'sqlite' ? roomForWrites(s.config.dataDir) : true]).then(
            ([, room]) => room,
            () => false,
          ),
          late,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    async metrics(caller) {
      const { publicMetrics, metricsTokenFile: metricsToken } = s.config;
      const allowed = publicMetrics || (metricsToken !== null && tokenIs(caller.token, metricsToken));
      if (!allowed) requireAdministrator(await actorOf(s, caller), 'read metrics');
      const c = s.counters;
      return {
        signinsOk: c.signinsOk,
        signinsFailed: c.signinsFailed,
        signups: c.signups,
        lockouts: c.lockouts,
        providerSignins: Object.fromEntries(Object.entries(c.providerSignins).map(([k, v]) => [k, { ...v }])),
        ldap: structuredClone(c.ldap),
        saml: { ...c.saml },
        hashesQueued: s.passwords.queued,
        hashesRunning: s.passwords.running,
        hashesDone: s.passwords.done,
        pool: poolStats(s.store),
        deliveries: structuredClone(s.sender.counts),
        queue: await queueFigures(root).then((q) => ({
          pending: q.pending,
          failed: q.failed,
          oldestPendingSeconds: q.oldestPendingAt === null ? 0 : Math.max(0, (s.clock.now() - q.oldestPendingAt) / 1000),
        })),
      };
    },
    signupStatus: () => signupStatus(root),
    hasAdministrator: () => administratorExists(root),
    filterIndexed: () => filterIndexed(root),
    schema: () => schemaStatus(root),
    async prune() {
      await Promise.all([
        pruneCounters(root, KEEP_COUNTERS_MS),
        pruneTokens(root),
        pruneSigningKeys(root, KEEP_RETIRED_KEYS_MS),
        pruneLegacySecret(root, (s.config.tokenTtl + 60) * 1000),
        pruneSessions(root, SESSION_IDLE_MS, KEEP_COUNTERS_MS),
        prunePayloads(root),
        pruneKnownSignins(root, KNOWN_SIGNIN_MS),
        pruneDeliveries(root, KEEP_DELIVERED_MS, KEEP_FAILED_MS),
        pruneSamlRequests(root),
      ]);
    },
  };
}

/** Free space below which a SQLite store is not ready: its log and a checkpoint need room to grow. */
export const READY_MIN_FREE_BYTES = 16 * 1024 * 1024;

/** Whether the data folder's disk has room for the store to grow (the space an ordinary user may use). */
async function roomForWrites(dataDir: string): Promise<boolean> {
  const disk = await statfs(dataDir);
  return disk.bavail * disk.bsize >= READY_MIN_FREE_BYTES;
}
