// Webhooks (contract section 17): registered from the shell, signed as Standard Webhooks and
// checked by the `standardwebhooks` library in a real receiver, retried with the same webhook-id,
// queued by admin commands and delivered only by a running server.
import crypto from 'node:crypto';
import net from 'node:net';
import t from 'tap';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { startReceiver } from '../helpers/receiver';
import { freePort } from '../helpers/browser';
import { PASSWORD, startTestServer, storeFlags, tempDir } from '../helpers/server';
import { startSmtp, tokenIn } from '../helpers/smtp';

t.test('an event reaches a receiver signed; a 500 is retried with the same webhook-id; no secret in the payload', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, { webhookAllowPrivate: ['loopback'] }, undefined, { clock });
  const receiver = await startReceiver(t);
  const added = await cli(s.dataDir, [
    '--json',
    '--webhook-allow-private',
    'loopback',
    'webhook',
    'add',
    '--url',
    receiver.url,
    '--event',
    'account.created',
    '--description',
    'CRM sync',
  ]);
  t.equal(added.code, 0, added.err);
  t.match(added.json.secret, /^whsec_[A-Za-z0-9+/=]{30,}$/, 'the signing secret, once');
  receiver.secret = added.json.secret;
  const listed = await cli(s.dataDir, ['--json', 'webhook', 'list']);
  t.notMatch(listed.out, /whsec_/, 'the secret is never listed');

  receiver.answers = [500];
  t.equal((await s.signup('ann@example.com')).status, 200);
  const first = await receiver.next(1);
  t.equal(first.status, 500, 'the first try was refused');
  t.ok(first.verified, 'it verified with the secret');
  await s.core.settle();
  const pending = await cli(s.dataDir, ['--json', 'deliveries']);
  t.equal(pending.code, 0, pending.err);
  t.equal(pending.json.deliveries.length, 1, 'listed as pending');
  t.equal(pending.json.deliveries[0].last_error, 'HTTP 500');
  t.equal(pending.json.deliveries[0].attempts, 1);

  clock.advance(10_000);
  await s.core.settle();
  const second = await receiver.next(2);
  t.equal(second.id, first.id, 'the same webhook-id on the retry');
  t.equal(second.status, 204);
  t.same(second.verified!.type, 'account.created');
  t.same(second.verified!.data.account.email, 'ann@example.com');
  t.ok(second.verified!.data.account.id, "the account's reference id");
  t.notMatch(second.body, /\$2[aby]\$|password|auth_version|whsec_/i, 'no hash, password, counter or secret');
  t.same((await cli(s.dataDir, ['--json', 'deliveries'])).json.deliveries, [], 'nothing pending or failed');

  // Not subscribed: a sign-in sends nothing to it.
  await s.signin('ann@example.com');
  await s.core.settle();
  t.equal(receiver.received.length, 2, 'only the events it asked for');
});

t.test('events from the shell, the API and the console are the same; removing a webhook drops its queue', async (t) => {
  const s = await startTestServer(t, { webhookAllowPrivate: ['loopback'] });
  await s.signup('admin@example.com');
  const receiver = await startReceiver(t);
  const added = await cli(s.dataDir, ['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', receiver.url]);
  receiver.secret = added.json.secret;
  await cli(s.dataDir, ['user', 'create', '--email', 'bo@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  await cli(s.dataDir, ['group', 'create', 'editors']);
  await cli(s.dataDir, ['group', 'add', 'editors', 'bo@example.com']);
  await s.signin('bo@example.com');
  t.equal((await cli(s.dataDir, ['user', 'disable', 'bo@example.com'])).code, 0);
  await s.core.settle();
  await receiver.next(4);
  const types = receiver.received.map((r) => r.verified?.type);
  for (const type of ['account.created', 'group.member_added', 'account.signed_in', 'account.disabled']) t.ok(types.includes(type), type);
  const member = receiver.received.find((r) => r.verified?.type === 'group.member_added')!;
  t.equal(member.verified!.data.group.name, 'editors');
  t.equal(member.verified!.data.via, 'cli', 'the shell made it');
  t.ok(
    receiver.received.every((r) => r.verified),
    'every one verified',
  );

  const removed = await cli(s.dataDir, ['--json', 'webhook', 'remove', added.json.webhook.id]);
  t.equal(removed.code, 0, removed.err);
  t.equal((await s.db('delivery').whereNotNull('webhook_id')).length, 0, 'its messages went with it');
  t.ok(await s.db('audit_event').where({ event: 'webhook_removed' }).first(), 'audited');
});

t.test('bad input: clear errors, nothing stored; a key in a query string is not printed back', async (t) => {
  const s = await startTestServer(t);
  for (const [args, said] of [
    [['--url', 'ftp://hooks.example.com/x'], /--url must be http or https, not ftp/],
    [['--url', 'hooks.example.com/x'], /--url must be an absolute http\(s\) URL/],
    [['--url', 'https://user:pw@hooks.example.com/x'], /--url must carry no user or password/],
    [['--url', 'https://hooks.example.com/x', '--event', 'account.exploded'], /unknown --event account\.exploded; the events are account\.created, /],
  ] as Array<[string[], RegExp]>) {
    const r = await cli(s.dataDir, ['webhook', 'add', ...args]);
    t.equal(r.code, 2, `refused: ${args.join(' ')}`);
    t.match(r.err, said);
  }
  t.equal((await s.db('webhook')).length, 0, 'nothing stored');
  const keyed = await cli(s.dataDir, ['--json', 'webhook', 'add', '--url', 'https://hooks.example.com/in?token=s3cr3t-k3y&x=1']);
  t.equal(keyed.code, 0, keyed.err);
  t.equal(keyed.json.webhook.url, 'https://hooks.example.com/in?token=…&x=…');
  const shown = await cli(s.dataDir, ['webhook', 'show', keyed.json.webhook.id]);
  t.notMatch(shown.out, /s3cr3t/, 'the key is not shown');
  t.match((await cli(s.dataDir, ['webhook', 'show', 'nope'])).err, /no webhook nope/);
  const rotated = await cli(s.dataDir, ['--json', 'webhook', 'rotate-secret', keyed.json.webhook.id]);
  t.not(rotated.json.secret, keyed.json.secret, 'a new secret');
});

t.test('queued by an admin command while no server runs, delivered when one starts; a closed port is listed with its error', async (t) => {
  const dir = tempDir(t);
  await storeFlags(t, dir); // on the PostgreSQL pass: the folder's database, before any command
  t.equal((await cli(dir, ['migrate'])).code, 0);
  const receiver = await startReceiver(t);
  const added = await cli(dir, ['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', receiver.url, '--event', 'account.created']);
  receiver.secret = added.json.secret;
  const closed = await freePort();
  await cli(dir, ['--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', `http://127.0.0.1:${closed}/gone`, '--event', 'account.created']);
  t.equal((await cli(dir, ['user', 'create', '--email', 'cy@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(receiver.received.length, 0, 'the command sent nothing itself');
  t.equal((await cli(dir, ['--json', 'deliveries'])).json.deliveries.length, 2, 'two messages wait');

  const s = await startTestServer(t, { webhookAllowPrivate: ['loopback'] }, dir);
  const got = await receiver.next(1);
  t.equal(got.verified!.data.account.email, 'cy@example.com', 'delivered once a server runs');
  await s.core.settle();
  const left = await cli(dir, ['deliveries']);
  t.match(left.out, /webhook +account\.created +pending +1 .*ECONNREFUSED/, 'the closed port: pending, with its error');
});

t.test('issue 46, item 4: targets inside the network are refused when added, unless the operator names them', async (t) => {
  const s = await startTestServer(t);
  const inside = [
    'http://127.0.0.1/x',
    'http://localhost:8080/x',
    'http://[::1]/x',
    'http://0.0.0.0/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.1/x',
    'http://2130706433/x',
    'http://0177.0.0.1/x',
    'http://0x7f.1/x',
    'http://192.168.1.1/x',
    'http://[fd00::1]/x',
    'http://[fe80::1]/x',
  ];
  for (const url of inside) {
    const r = await cli(s.dataDir, ['webhook', 'add', '--url', url]);
    t.equal(r.code, 2, `${url} refused`);
    t.match(
      r.err,
      /--url (is|resolves to [^ ]+,) an? [a-z-]+ address: Gatehouse does not send requests inside the network unless the operator allows it \(--webhook-allow-private /,
    );
  }
  t.equal((await s.db('webhook')).length, 0, 'nothing stored');
  const allowed = ['--webhook-allow-private', '10.1.2.0/24', '--webhook-allow-private', 'loopback'];
  t.equal((await cli(s.dataDir, [...allowed, 'webhook', 'add', '--url', 'http://10.1.2.3/x'])).code, 0, 'a named block is allowed');
  t.equal((await cli(s.dataDir, [...allowed, 'webhook', 'add', '--url', 'http://localhost:9/x'])).code, 0, 'loopback, when named');
  t.equal((await cli(s.dataDir, [...allowed, 'webhook', 'add', '--url', 'http://10.0.0.1/x'])).code, 2, 'the rest of 10/8 is not');
  const typo = await cli(s.dataDir, ['--webhook-allow-private', 'loopbak', 'webhook', 'list']);
  t.equal(typo.code, 2, 'a setting that names nothing known refuses to run');
  t.match(typo.err, /--webhook-allow-private takes loopback, private, link-local/);
});

t.test('issue 46, item 4: the address actually dialled is checked when the message is sent', async (t) => {
  const s = await startTestServer(t);
  const receiver = await startReceiver(t);
  const port = new URL(receiver.url).port;
  // Rows as if added while the name resolved elsewhere (DNS rebinding) or while the operator allowed loopback.
  for (const url of [`http://localhost:${port}/hooks/gatehouse`, `http://127.0.0.1:${port}/hooks/gatehouse`]) {
    await s
      .db('webhook')
      .insert({ reference_id: crypto.randomUUID(), url, description: '', events: '[]', secret: 'whsec_' + 'A'.repeat(32), created_at: Date.now() });
  }
  await s.signup('rebind@example.com');
  await s.core.settle();
  t.equal(receiver.received.length, 0, 'nothing reached the loopback receiver');
  const listed = await cli(s.dataDir, ['--json', 'deliveries']);
  const errors = listed.json.deliveries.filter((d: { kind: string }) => d.kind === 'webhook').map((d: { last_error: string }) => d.last_error);
  t.ok(errors.length >= 2);
  for (const e of errors)
    t.match(e, /^refused: (127\.0\.0\.1|::1) is a loopback address \(allowed only by --webhook-allow-private, or GATEHOUSE_WEBHOOK_ALLOW_PRIVATE\)$/, e);
});

t.test('issue 46, item 5: a reset mail arrives while ten webhook endpoints hang; a healthy endpoint is not held either', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url, webhookAllowPrivate: ['loopback'], rateLimits: false });
  // A listener that takes connections and never answers.
  const held = new Set<net.Socket>();
  const hang = net.createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of held) socket.destroy();
    hang.close();
  });
  const hangUrl = `http://127.0.0.1:${(hang.address() as net.AddressInfo).port}/hook`;
  for (let i = 0; i < 10; i++) t.equal((await cli(s.dataDir, ['--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', `${hangUrl}${i}`])).code, 0);
  const healthy = await startReceiver(t);
  healthy.secret = (await cli(s.dataDir, ['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', healthy.url])).json.secret;
  await cli(s.dataDir, ['user', 'create', '--email', 'jo@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  // Failed sign-ins by anyone who knows the address: each is an event for all eleven endpoints.
  for (let i = 0; i < 8; i++) await s.action('user_account', 'signin', { email: 'jo@example.com', password: 'not the password' });
  const asked = await s.action('user_account', 'reset_password_request', { email: 'jo@example.com' });
  t.equal(asked.status, 200);
  const mail = await smtp.next('jo@example.com', 1);
  t.ok(tokenIn(mail), 'the reset mail arrived');
  t.equal(held.size, 10, 'while each hanging endpoint still holds its first try (none has timed out)');
  await healthy.next(9);
  t.equal(held.size, 10, 'and the healthy endpoint got every event meanwhile, in order');
  t.same(
    healthy.received.map((r) => r.verified?.type),
    ['account.created', ...Array(8).fill('account.signin_failed')],
  );
});
