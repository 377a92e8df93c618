// Nothing lost: a reset asked for while SMTP refuses arrives once it is back; a webhook in flight
// when the packaged server is killed (SIGKILL) is delivered after the restart, with its webhook-id;
// an invitation from a shell says where its mail goes, and no admin command sends anything itself.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { startReceiver } from '../helpers/receiver';
import { PASSWORD, startTestServer, storeFlags, tempDir } from '../helpers/server';
import { startSmtp, tokenIn } from '../helpers/smtp';

t.test('a reset during an SMTP outage arrives after it, and its link works', async (t) => {
  const smtp = await startSmtp(t);
  const clock = manualClock();
  const s = await startTestServer(t, { smtpUrl: smtp.url }, undefined, { clock });
  await cli(s.dataDir, ['user', 'create', '--email', 'jo@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  await s.core.settle();
  smtp.failing = true;
  const asked = await s.action('user_account', 'reset_password_request', { email: 'jo@example.com' });
  t.equal(asked.status, 200);
  await s.core.settle();
  const waiting = await cli(s.dataDir, ['--json', 'deliveries']);
  const reset = waiting.json.deliveries.find((d: { topic: string }) => d.topic === 'reset');
  t.match(reset, { kind: 'mail', state: 'pending', attempts: 1 }, 'the reset mail waits, its try recorded');
  t.match(reset.last_error, /^SMTP \d{3}/, 'with the SMTP error code, no server text');
  t.notMatch(waiting.out, /jo@example\.com|reset-password#token/, 'the list shows no address or link');
  smtp.failing = false;
  clock.advance(10_000);
  await s.core.settle();
  const mail = await smtp.next('jo@example.com', 1);
  const token = tokenIn(mail);
  const done = await s.action('user_account', 'reset_password', { token, password: 'a brand new password 7', passwordConfirm: 'a brand new password 7' });
  t.equal(done.status, 200, 'the late link works');
  const row = await s.db('delivery').where({ topic: 'reset' }).first();
  t.equal(row.state, 'delivered');
  t.equal(row.payload, null, "a delivered mail's text (its link) is not kept");
});

t.test('five failed tries over hours, then failed and kept for the operator', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, { publicMetrics: true, webhookAllowPrivate: ['loopback'] }, undefined, { clock });
  const receiver = await startReceiver(t);
  receiver.answers = [500, 502, 503, 500, 500, 500, 500];
  const added = await cli(s.dataDir, ['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', receiver.url]);
  receiver.secret = added.json.secret;
  await s.signup('ed@example.com');
  await s.core.settle();
  const waits: number[] = [];
  for (let i = 0; i < 10; i++) {
    const row = await s.db('delivery').first();
    if (row.state !== 'pending') break;
    waits.push(row.next_at - clock.now());
    clock.set(Number(row.next_at));
    await s.core.settle();
  }
  const row = await s.db('delivery').first();
  t.equal(row.state, 'failed');
  t.equal(row.attempts, 6, 'the first try and five retries');
  t.equal(receiver.received.length, 6);
  t.ok(new Set(receiver.received.map((r) => r.id)).size === 1, 'one webhook-id for every try');
  const total = waits.reduce((a, b) => a + b, 0);
  t.ok(total > 60 * 60_000, `spread over more than an hour (${Math.round(total / 60_000)} min)`);
  t.ok(
    waits.every((w, i) => i === 0 || w > waits[i - 1]),
    'each wait longer than the one before',
  );
  const listed = await cli(s.dataDir, ['deliveries']);
  t.match(listed.out, /webhook +account\.created +failed +6 +- +HTTP 500/);
  // The line follows the row's change (a full run once read the logs in between).
  for (let i = 0; i < 100 && !/"event":"delivery_failed"/.test(s.logs.join('')); i++) await new Promise((r) => setTimeout(r, 50));
  t.match(s.logs.join(''), /"event":"delivery_failed"/);
  t.notMatch(s.logs.join(''), /whsec_/, 'the signing secret is in no log line');
  const metrics = (await s.call('GET', '/metrics')).text;
  t.match(metrics, /gatehouse_deliveries_total\{kind="webhook",outcome="retried"\} 5/);
  t.match(metrics, /gatehouse_deliveries_total\{kind="webhook",outcome="failed"\} 1/);
  t.match(metrics, /gatehouse_delivery_queue_failed 1/);
  t.match(metrics, /gatehouse_delivery_queue_pending 0/);
});

t.test('an invitation from a shell says where its mail goes; the command itself sends nothing', async (t) => {
  const dir = tempDir(t);
  await storeFlags(t, dir); // on the PostgreSQL pass: the folder's database, before any command
  t.equal((await cli(dir, ['migrate'])).code, 0);
  const before = await cli(dir, ['user', 'invite', 'ann@example.com']);
  t.match(before.out, /mail: +queued; no server has run on this store yet: it is sent when gatehouse serve starts/);
  t.notOk(fs.existsSync(path.join(dir, 'outbox')), 'no outbox written by the command');
  const s = await startTestServer(t, { publicUrl: 'https://auth.example.test' }, dir);
  await s.core.settle();
  t.equal(fs.readdirSync(path.join(dir, 'outbox')).length, 1, 'the server wrote it');
  const after = await cli(dir, ['--json', 'user', 'invite', 'bo@example.com', '--print-link']);
  t.match(after.json.mail, { via: 'outbox' });
  t.ok(after.json.link.startsWith('https://auth.example.test/signup?invite='), "the server's public URL, not the shell's default");
  const said = await cli(dir, ['user', 'invite', 'cy@example.com']);
  t.match(said.out, /mail: +queued; the server writes it to .*outbox \(no --smtp-url/);
  const provider = await cli(
    dir,
    ['--json', 'provider', 'add', '--name', 'up', '--issuer', 'https://id.example.com', '--client-id', 'gh', '--client-secret-env', 'S'],
    {
      env: { S: 'secret' },
    },
  );
  t.equal(provider.json.redirect_uri, 'https://auth.example.test/signin/provider/up/callback', "provider add's redirect URI too");
  const given = await cli(dir, ['--json', 'user', 'invite', 'di@example.com', '--print-link'], { env: { GATEHOUSE_PUBLIC_URL: 'https://other.example.test' } });
  t.ok(given.json.link.startsWith('https://other.example.test/'), 'a public URL given to the command (GATEHOUSE_PUBLIC_URL) wins');
});

t.test('a webhook in flight when the server is killed is delivered after the restart', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const receiver = await startReceiver(t);
  const data = ['--data-dir', path.join(dir, 'data')];
  t.equal((await runExe(exe, [...data, 'migrate'], { env, cwd: dir })).code, 0);
  const added = JSON.parse(
    (await runExe(exe, [...data, '--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', receiver.url], { env, cwd: dir })).stdout,
  );
  receiver.secret = added.secret;
  receiver.hold = true;
  const first = await serveExe(t, exe, [...data, '--bcrypt-cost', '4', '--webhook-allow-private', 'loopback'], { env, cwd: dir });
  const signup = await fetch(`${first.url}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'kit@example.com', name: 'Kit', password: PASSWORD, passwordConfirm: PASSWORD } }),
  });
  t.equal(signup.status, 200);
  const held = await receiver.next(1);
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  receiver.hold = false;
  const second = await serveExe(t, exe, [...data, '--bcrypt-cost', '4', '--webhook-allow-private', 'loopback'], { env, cwd: dir });
  const delivered = await receiver.next(2);
  t.equal(delivered.id, held.id, 'the same message, the same webhook-id');
  t.equal(delivered.status, 204);
  t.equal(delivered.verified?.data.account.email, 'kit@example.com');
  t.match(second.output(), /"event":"deliveries_resumed","messages":1/);
  await second.stop();
});

t.test('issue 46, item 18: a second server on the same SQLite folder does not move the links of the first', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const data = ['--data-dir', path.join(dir, 'data')];
  t.equal((await runExe(exe, [...data, 'migrate'], { env, cwd: dir })).code, 0);
  const first = await serveExe(t, exe, data, { env, cwd: dir });
  const second = await serveExe(t, exe, data, { env, cwd: dir });
  t.not(first.publicUrl, second.publicUrl, 'two ports, two public URLs');
  t.match(second.output(), /"event":"public_url_kept".*another server on this store runs with http:\/\/localhost:\d+/);
  t.equal(await second.stop(), 0);
  const link = async () =>
    JSON.parse((await runExe(exe, [...data, '--json', 'user', 'invite', `x${Date.now()}@example.com`, '--print-link'], { env, cwd: dir })).stdout)
      .link as string;
  t.ok((await link()).startsWith(`${first.publicUrl}/`), 'links still name the server that runs');
  t.equal(await first.stop(), 0);
  // Alone on the store, a server records its own address (and says the old one is gone).
  const third = await serveExe(t, exe, data, { env, cwd: dir });
  t.match(third.output(), /"event":"public_url_changed"/);
  t.ok((await link()).startsWith(`${third.publicUrl}/`));
  t.equal(await third.stop(), 0);
});
