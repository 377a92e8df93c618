// The PostgreSQL pass of the test suite: the same tests with GATEHOUSE_TEST_STORE=postgres, each
// test in its own database, on GATEHOUSE_TEST_PG or postgres://postgres@127.0.0.1:5432/test.
// When that server is not reachable, says so and runs nothing (exit 0): SQLite stays the default.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

const url = process.env.GATEHOUSE_TEST_PG || 'postgres://postgres@127.0.0.1:5432/test';
const shown = url.replace(/\/\/[^@]*@/, '//…@');
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
try {
  await client.connect();
  await client.query('SELECT 1');
  await client.end();
} catch (err) {
  console.log(`# PostgreSQL is not reachable at ${shown} (${err.code ?? err.message}): the PostgreSQL pass did not run`);
  process.exit(0);
}
console.log(`# PostgreSQL pass on ${shown}`);
const r = spawnSync('npx', ['tap', ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, GATEHOUSE_TEST_STORE: 'postgres' } });
process.exit(r.status ?? 1);
