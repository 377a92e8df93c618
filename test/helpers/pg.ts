/**
 * PostgreSQL for tests: each test gets its own database (created here, dropped at teardown), so
 * runs never collide. The server is GATEHOUSE_TEST_PG or postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Test } from 'tap';
import pg from 'pg';
import { generate } from 'otplib';
import { systemClock } from '../../src/clock';
import { loadConfig } from '../../src/config';
import { openStore } from '../../src/store/connection';
import { migrationsHash } from './db';
import { exeFolder, runExe, serveExe, type ExeResult, type ServeHandle } from './exe';

export const PG_ADMIN_URL = process.env.GATEHOUSE_TEST_PG || 'postgres://postgres@127.0.0.1:5432/test';

export async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function urlOf(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A database migrated once (by openStore, as a server does) and kept as the template that
 * migratedDatabase copies: CREATE DATABASE ... TEMPLATE copies files instead of running every
 * migration again for each test. It is built under a name of its own and renamed when complete,
 * so a second process (tap runs two files at a time) never copies a half-made one: whichever
 * rename comes second finds the name taken and drops its own copy. No session stays connected to
 * it (PostgreSQL refuses to copy a database others are connected to): it takes no connections.
 */
let template: Promise<string> | undefined;
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `gh_tpl_${migrationsHash()}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return name;
      const building = `gh_tplb_${randomBytes(6).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${building}`);
      try {
        const store = await openStore(loadConfig({ dataDir: os.tmpdir(), db: urlOf(building) }, {}), systemClock);
        await store.close();
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      } catch (err) {
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`).catch(() => {});
        // Another process's template took the name first: use it.
        if ((err as { code?: string }).code === '42P04') return name;
        throw err;
      }
      await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      return name;
    } finally {
      await admin.end();
    }
  })();
  template.catch(() => (template = undefined));
  return template;
}

async function databaseFor(t: Test, from: string | null): Promise<string> {
  const name = `gh_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}${from ? ` TEMPLATE ${from}` : ''}`);
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  return urlOf(name);
}

/** A fresh, empty database; returns its URL. Dropped when the test ends. */
export function freshDatabase(t: Test): Promise<string> {
  return databaseFor(t, null);
}

/**
 * A fresh database with every migration applied (a copy of the migrated template: as if a server
 * had opened it once); returns its URL. Dropped when the test ends. For tests whose subject is
 * not the migrations themselves: those take freshDatabase.
 */
export async function migratedDatabase(t: Test): Promise<string> {
  return databaseFor(t, await migratedTemplate());
}

/**
 * A fresh PostgreSQL database and the packaged executable beside it (a folder of its own), with
 * `shell` to run its commands there and `serve` to start servers on it: what every
 * several-instances test stands on. Null, with the test failed, when PostgreSQL is not reachable.
 */
export async function onPostgres(t: Test): Promise<{
  db: string;
  serve: (flags: string[]) => Promise<ServeHandle>;
  shell: (args: string[], env?: Record<string, string>, stdin?: string) => Promise<ExeResult>;
} | null> {
  if (!(await pgReachable())) {
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return null;
  }
  const db = await freshDatabase(t);
  const { dir, exe, env } = exeFolder(t);
  const pgEnv = { ...env, GATEHOUSE_DB: db };
  return {
    db,
    serve: (flags) => serveExe(t, exe, flags, { env: pgEnv, cwd: dir }),
    shell: (args, extra = {}, stdin) => runExe(exe, args, { env: { ...pgEnv, ...extra }, cwd: dir, stdin }),
  };
}

/** One item of an action's answer (JSON:API-like: a key and value, or a notice). */
export type ActionItem = { ResponseType: string; Attributes: Record<string, unknown> };

/**
 * Two packaged instances on one fresh PostgreSQL database, started with the same flags (quick
 * hashing, no per-client limits, and `extra`), and an administrator made at the shell with
 * `password`: what the "sent to both at once" tests stand on. `spread` sends one request to A, B,
 * A and B at once; `action` posts an action to an instance; `signin` answers the admin's token.
 */
export async function twoInstances(t: Test, password: string, extra: string[] = []) {
  const pg = await onPostgres(t);
  if (!pg) return null;
  const flags = ['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--no-rate-limits', ...extra];
  const [a, b] = await Promise.all([pg.serve(flags), pg.serve(flags)]);
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW: password })).code, 0, 'an administrator');
  const spread = <T>(fn: (base: string) => Promise<T>) => Promise.all([a.url, b.url, a.url, b.url].map(fn));
  const action = async (base: string, name: string, attributes: Record<string, unknown>, bearer?: string) => {
    const r = await fetch(`${base}/action/user_account/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: JSON.stringify({ attributes }),
    });
    return { status: r.status, items: (await r.json()) as ActionItem[] };
  };
  const signin = async (base: string) => {
    const r = await action(base, 'signin', { email: 'admin@example.com', password });
    return String(r.items.find((i) => i.Attributes.key === 'token')!.Attributes.value);
  };
  /** TOTP turned on for the administrator through the actions on A: its secret and recovery codes. */
  const totpOn = async () => {
    const token = await signin(a.url);
    const secret = String((await action(a.url, 'totp_enroll', { password }, token)).items[0].Attributes.secret);
    const on = await action(a.url, 'totp_confirm', { otp: await generate({ secret }) }, token);
    const codes = on.items.find((i) => i.Attributes.codes)?.Attributes.codes as string[] | undefined;
    if (!codes) throw new Error(`TOTP was not turned on: ${JSON.stringify(on.items)}`);
    return { secret, codes };
  };
  return { ...pg, a, b, spread, action, signin, totpOn };
}
