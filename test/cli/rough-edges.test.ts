// CLI regressions from issue 13: one-line errors (JSON under --json), exit codes, quiet no-ops.
import t from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir } from '../helpers/server';

t.test('usage errors are one gatehouse: line, or JSON under --json, exit 2', async (t) => {
  const dir = tempDir(t);
  const unknown = await cli(dir, ['stats', '--bogus']);
  t.equal(unknown.code, 2);
  t.equal(unknown.err, "gatehouse: unknown option '--bogus' (see gatehouse --help)\n");
  const json = await cli(dir, ['--json', 'user', 'show']);
  t.equal(json.code, 2);
  t.same(JSON.parse(json.err), { error: { code: 'invalid_input', message: "missing required argument 'email' (see gatehouse --help)" } });
  const command = await cli(dir, ['frobnicate']);
  t.match(command.err, /^gatehouse: unknown command 'frobnicate'/);
  t.equal(command.err.split('\n').length, 2, 'one line');
});

t.test('an unreachable PostgreSQL is one line and exit 5, whether refused or unresolvable', async (t) => {
  const dir = tempDir(t);
  for (const db of ['postgres://127.0.0.1:1/test', 'postgres://no-such-host.invalid/test']) {
    let console = '';
    const write = process.stderr.write.bind(process.stderr);
    const original = { warn: globalThis.console.warn, error: globalThis.console.error, log: globalThis.console.log };
    globalThis.console.warn = globalThis.console.error = globalThis.console.log = (...a: unknown[]) => void (console += a.join(' '));
    process.stderr.write = ((chunk: string) => ((console += chunk), true)) as typeof process.stderr.write;
    let r;
    try {
      r = await cli(dir, ['stats', '--db', db]);
    } finally {
      Object.assign(globalThis.console, original);
      process.stderr.write = write;
    }
    t.equal(r.code, 5, db);
    t.match(r.err, /^gatehouse: the store at postgres:\/\/[^ ]+ could not be opened \((ECONNREFUSED|ENOTFOUND|EAI_AGAIN)\)\n$/);
    t.equal(console, '', 'nothing else printed (no "Acquire connection error", no stack)');
  }
});

t.test('GATEHOUSE_DB and GATEHOUSE_DB_FILE both set: refused, naming both', async (t) => {
  const dir = tempDir(t);
  const r = await cli(dir, ['stats'], { env: { GATEHOUSE_DB: 'postgres://127.0.0.1/test', GATEHOUSE_DB_FILE: '/dev/null' } });
  t.equal(r.code, 2);
  t.match(r.err, /GATEHOUSE_DB and GATEHOUSE_DB_FILE are both set/);
  t.notMatch(r.err, /127\.0\.0\.1/, 'never the value');
});

t.test('user unlock on an account that is not locked writes no audit row', async (t) => {
  const s = await startTestServer(t);
  await s.signup('uma@example.com');
  const r = await cli(s.dataDir, ['--json', 'user', 'unlock', 'uma@example.com']);
  t.equal(r.json.changed, false);
  const audited = await s.db('audit_event').where({ event: 'account_unlocked' });
  t.equal(audited.length, 0);
  for (let i = 0; i < 3; i++) await s.action('user_account', 'signin', { email: 'uma@example.com', password: 'wrong password here' });
  t.equal((await cli(s.dataDir, ['--json', 'user', 'unlock', 'uma@example.com'])).json.changed, true);
  t.equal((await s.db('audit_event').where({ event: 'account_unlocked' })).length, 1, 'a real unlock is audited');
});

t.test('audit shows short account ids in its table and whole ones under --json', async (t) => {
  const s = await startTestServer(t);
  await s.signup('ava@example.com');
  await s.action('user_account', 'signin', { email: 'ava@example.com', password: 'wrong password here' });
  const json = await cli(s.dataDir, ['--json', 'audit', '--account', 'ava@example.com']);
  const id = json.json.events[0].account as string;
  t.ok(id.length > 9);
  const text = await cli(s.dataDir, ['audit', '--account', 'ava@example.com']);
  t.match(text.out, new RegExp(`  ${id.slice(0, 8)}…  `));
  t.notMatch(text.out, id, 'the whole id is not in the table');
});

t.test('no subcommand: the help and exit 2, without commander’s "(outputHelp)"; every --help shows the global flags', async (t) => {
  const dir = tempDir(t);
  for (const args of [[], ['user'], ['group']]) {
    const r = await cli(dir, args);
    t.equal(r.code, 2, `${args.join(' ') || '(none)'}: usage`);
    t.match(r.out + r.err, /Usage: gatehouse/);
    t.notMatch(r.out + r.err, /outputHelp/);
  }
  const help = await cli(dir, ['user', 'list', '--help']);
  t.equal(help.code, 0);
  t.match(help.out, /Global Options:[\s\S]*--data-dir[\s\S]*--db[\s\S]*--json/);
  t.equal((help.out.match(/Usage:/g) ?? []).length, 1, 'one help, not two');
});
