// kill -9 at random moments against the packaged server, then restart: the store is intact and
// every answered write is there, whole. Signups at concurrency 20, password changes, TOTP confirms.
import path from 'node:path';
import t, { Test } from 'tap';
import { DatabaseSync } from 'node:sqlite';
import { exeFolder, runExe, serveExe, ServeHandle } from '../helpers/exe';

const PW = 'crash test password 1';
// Seeded (mulberry32), so a failing run can be repeated: GATEHOUSE_TEST_SEED=<the seed it printed>.
const SEED = Number(process.env.GATEHOUSE_TEST_SEED ?? Math.floor(Math.random() * 2 ** 32));
let state = SEED >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let x = state;
  x = Math.imul(x ^ (x >>> 15), x | 1);
  x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
  return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
};
const rnd = (min: number, max: number) => min + Math.floor(random() * (max - min));
t.comment(`crash test seed: ${SEED} (GATEHOUSE_TEST_SEED=${SEED} repeats this run)`);

async function query(file: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare(sql).all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

async function post(url: string, attributes: Record<string, unknown>, token?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ attributes }),
  });
  return { status: res.status, body: (await res.json()) as Array<{ ResponseType: string; Attributes: Record<string, unknown> }> };
}
const tokenIn = (body: Array<{ ResponseType: string; Attributes: Record<string, unknown> }>) =>
  String(body.find((i) => i.ResponseType === 'client.store.set')?.Attributes.value);

async function kill9(server: ServeHandle): Promise<void> {
  server.child.kill('SIGKILL');
  await new Promise((r) => (server.child.exitCode !== null || server.child.signalCode !== null ? r(null) : server.child.once('exit', r)));
}

async function invariants(t: Test, file: string) {
  t.same(await query(file, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }], 'integrity_check ok');
  const noGroup = await query(
    file,
    `SELECT a.email FROM user_account a WHERE NOT EXISTS (
      SELECT 1 FROM usergroup g JOIN membership m ON m.usergroup_id = g.id AND m.account_id = a.id
      WHERE g.user_account_id = a.id AND g.system_role IS NULL)`,
  );
  t.same(noGroup, [], 'every account has its dedicated group and membership');
  const orphanGroups = await query(
    file,
    `SELECT g.id FROM usergroup g WHERE g.system_role IS NULL AND NOT EXISTS (SELECT 1 FROM membership m WHERE m.usergroup_id = g.id)`,
  );
  t.same(orphanGroups, [], 'no orphan group');
  const orphanMemberships = await query(
    file,
    `SELECT m.id FROM membership m LEFT JOIN user_account a ON a.id = m.account_id LEFT JOIN usergroup g ON g.id = m.usergroup_id WHERE a.id IS NULL OR g.id IS NULL`,
  );
  t.same(orphanMemberships, [], 'no orphan membership');
  t.same(await query(file, 'SELECT email_key FROM user_account GROUP BY email_key HAVING COUNT(*) > 1'), [], 'no duplicate email');
}

t.test('signups at concurrency 20, kill -9, restart: nothing answered is lost, nothing is half-written', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const cwd = dir;
  const file = path.join(dir, 'gatehouse-data', 'gatehouse.sqlite');
  t.equal((await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { env: { ...env, PW }, cwd })).code, 0);
  t.equal((await runExe(exe, ['action', 'set-permission', 'signup', '--guest', 'on'], { env, cwd })).code, 0);
  const answered: string[] = [];
  let n = 0;
  for (let round = 0; round < 5; round++) {
    const server = await serveExe(t, exe, ['--bcrypt-cost', '4', '--no-rate-limits'], { env, cwd });
    let stop = false;
    const workers = Array.from({ length: 20 }, async () => {
      while (!stop) {
        const email = `r${round}-${n++}@example.com`;
        try {
          const r = await post(`${server.url}/action/user_account/signup`, { email, name: 'Crash', password: PW, passwordConfirm: PW });
          if (r.status === 200) answered.push(email);
        } catch {
          return; // the server is gone
        }
      }
    });
    // Kill mid-stream: once this round has some answered signups (however busy the machine),
    // then after a random moment more.
    const before = answered.length;
    for (let waited = 0; answered.length - before < 5 && waited < 60_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, rnd(0, 800)));
    await kill9(server);
    stop = true;
    await Promise.all(workers);
    await invariants(t, file);
  }
  t.ok(answered.length > 20, `${answered.length} signups answered 200 before the kills`);
  const server = await serveExe(t, exe, ['--bcrypt-cost', '4', '--no-rate-limits'], { env, cwd });
  let signedIn = 0;
  for (const email of answered) if ((await post(`${server.url}/action/user_account/signin`, { email, password: PW })).status === 200) signedIn++;
  t.equal(signedIn, answered.length, 'every answered signup exists and can sign in');
  await server.stop();
});

t.test('password change, kill -9: exactly one of old/new works and auth_version matches', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const cwd = dir;
  const file = path.join(dir, 'gatehouse-data', 'gatehouse.sqlite');
  await runExe(exe, ['bootstrap-admin', '--email', 'pat@example.com', '--password-env', 'PW'], { env: { ...env, PW: 'password-0 long' }, cwd });
  let current = 'password-0 long';
  let changes = 0;
  for (let round = 0; round < 5; round++) {
    const server = await serveExe(t, exe, ['--bcrypt-cost', '4'], { env, cwd });
    let token = tokenIn((await post(`${server.url}/action/user_account/signin`, { email: 'pat@example.com', password: current })).body);
    let inFlight: string | null = null;
    const worker = (async () => {
      for (;;) {
        const next = `password-${changes + 1} long`;
        inFlight = next;
        try {
          const r = await post(`${server.url}/action/user_account/change_password`, { currentPassword: current, password: next, passwordConfirm: next }, token);
          if (r.status !== 200) throw new Error(`change_password answered ${r.status}`);
          token = tokenIn(r.body);
          current = next;
          changes++;
          inFlight = null;
        } catch {
          return;
        }
      }
    })();
    await new Promise((r) => setTimeout(r, rnd(100, 800)));
    await kill9(server);
    await worker;
    t.same(await query(file, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    const [row] = await query(file, `SELECT auth_version FROM user_account WHERE email_key = 'pat@example.com'`);
    const restarted = await serveExe(t, exe, ['--bcrypt-cost', '4'], { env, cwd });
    const works = async (pw: string) => (await post(`${restarted.url}/action/user_account/signin`, { email: 'pat@example.com', password: pw })).status === 200;
    const oldWorks = await works(current);
    const newWorks = inFlight !== null && (await works(inFlight));
    t.ok(oldWorks !== newWorks, `round ${round}: exactly one of old/new works (old ${oldWorks}, new ${newWorks})`);
    if (newWorks) {
      current = inFlight!;
      changes++;
    }
    t.equal(Number(row.auth_version), 1 + changes, `round ${round}: auth_version = 1 + ${changes} changes`);
    await restarted.stop();
  }
  t.ok(changes >= 5, `${changes} password changes`);
});

t.test('TOTP confirmation, kill -9: the second factor is either fully on or fully off', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const cwd = dir;
  const file = path.join(dir, 'gatehouse-data', 'gatehouse.sqlite');
  const { generate } = await import('otplib');
  await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { env: { ...env, PW }, cwd });
  await runExe(exe, ['action', 'set-permission', 'signup', '--guest', 'on'], { env, cwd });
  const outcomes = { on: 0, off: 0 };
  for (let round = 0; round < 6; round++) {
    const server = await serveExe(t, exe, ['--bcrypt-cost', '4'], { env, cwd });
    const email = `totp${round}@example.com`;
    await post(`${server.url}/action/user_account/signup`, { email, name: 'T', password: PW, passwordConfirm: PW });
    const token = tokenIn((await post(`${server.url}/action/user_account/signin`, { email, password: PW })).body);
    const enrol = await post(`${server.url}/action/user_account/totp_enroll`, { password: PW }, token);
    const secret = String(enrol.body[0].Attributes.secret);
    const otp = await generate({ secret });
    void post(`${server.url}/action/user_account/totp_confirm`, { otp }, token).catch(() => undefined);
    await new Promise((r) => setTimeout(r, rnd(0, 12)));
    await kill9(server);
    t.same(await query(file, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    const [row] = await query(
      file,
      `SELECT a.totp_enabled, a.totp_last_step, a.auth_version, (SELECT COUNT(*) FROM recovery_code r WHERE r.account_id = a.id) AS codes FROM user_account a WHERE a.email_key = '${email}'`,
    );
    const on = Number(row.totp_enabled) === 1;
    if (on) {
      outcomes.on++;
      t.match(row, { codes: 10, auth_version: 2 }, `round ${round}: fully on (10 codes, sessions bumped)`);
      t.ok(row.totp_last_step !== null);
    } else {
      outcomes.off++;
      t.match(row, { codes: 0, auth_version: 1, totp_last_step: null }, `round ${round}: fully off`);
    }
  }
  t.comment(`outcomes: ${JSON.stringify(outcomes)}`);
});
