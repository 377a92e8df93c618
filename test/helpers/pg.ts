/**
 * PostgreSQL for tests: each test gets its own database (created here, dropped at teardown), so
 * runs never collide. The server is GATEHOUSE_TEST_PG or postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import pg from 'pg';
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

/** A fresh, empty database; returns its URL. Dropped when the test ends. */
export async function freshDatabase(t: Test): Promise<string> {
  const name = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
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
