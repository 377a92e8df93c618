// Newcomer's run, items 18 and 19: a mistyped --data-dir made an empty store and answered
// (`user list` printed an empty table, exit 0; `stats` made ./gatehouse-data), and PostgreSQL's
// refusals printed "unexpected error (3D000)" with exit 1.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir } from '../helpers/server';
import { pgReachable } from '../helpers/pg';

t.test('admin commands refuse a data directory without a store (exit 4, naming the path) and create nothing', async (t) => {
  const dir = tempDir(t);
  const typo = path.join(dir, 'gatehouse-dta');
  for (const args of [['user', 'list'], ['stats'], ['group', 'list'], ['keys', 'list'], ['client', 'list'], ['audit']]) {
    const r = await cli(typo, ['--db', '', ...args]);
    t.equal(r.code, 4, `${args.join(' ')}: exit 4`);
    t.match(r.err, new RegExp(`no Gatehouse store at ${typo.replace(/[/.]/g, '\\$&')}`), `${args.join(' ')}: names the path`);
  }
  t.notOk(fs.existsSync(typo), 'nothing was created');
  const made = await cli(typo, ['--db', '', 'migrate']);
  t.equal(made.code, 0, 'migrate makes a store');
  t.equal((await cli(typo, ['--db', '', 'user', 'list'])).code, 0, 'then the commands answer');
});

t.test('PostgreSQL refusals are said plainly, exit 5', async (t) => {
  if (!(await pgReachable())) {
    // As the test/pg tests do: a missing server is a failure to see, not a pass.
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return;
  }
  const dir = tempDir(t);
  const missing = await cli(dir, ['--db', 'postgres://postgres@127.0.0.1:5432/gatehouse_no_such_db', 'user', 'list']);
  t.equal(missing.code, 5);
  t.match(missing.err, /the database does not exist/);
  const role = await cli(dir, ['--db', 'postgres://no_such_role@127.0.0.1:5432/test', 'user', 'list']);
  t.equal(role.code, 5);
  t.match(role.err, /role or its password was refused|may not connect/);
  t.notMatch(missing.err + role.err, /unexpected error/);
});
