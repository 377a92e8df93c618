// Issue 57, item 7: targets inside the network written as IPv4 inside IPv6 (`[::127.0.0.1]`,
// `[::a9fe:a9fe]`, `[::10.0.0.1]`), behind the local-use NAT64 prefix (`[64:ff9b:1::a9fe:a9fe]`)
// or in the benchmarking block (`198.18.0.1`) were accepted by `webhook add` and `scim target
// add` and dialled by the server. One classifier (src/config/address-ranges.ts, its table in
// test/unit/target-addresses.test.ts) now decides when a URL is added, from the shell and the
// console alike, and on every address the server dials, names resolved included.
import crypto from 'node:crypto';
import t from 'tap';
import { cli } from '../helpers/cli';
import { startReceiver } from '../helpers/receiver';
import { startTestServer } from '../helpers/server';

const INSIDE: Array<[string, string]> = [
  ['http://[::127.0.0.1]/hook', 'loopback'],
  ['http://[::7f00:1]/hook', 'loopback'],
  ['http://[::a9fe:a9fe]/latest/meta-data', 'link-local'],
  ['http://[::10.0.0.1]/hook', 'private'],
  ['http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data', 'reserved'],
  ['http://198.18.0.1/hook', 'reserved'],
  ['http://[::ffff:0:7f00:1]/hook', 'loopback'],
  ['http://[64:ff9b::a9fe:a9fe]/hook', 'link-local'],
  ['http://[2002:a9fe:a9fe::1]/hook', 'link-local'],
  ['http://[0:0:0:0:0:ffff:a00:1]/hook', 'private'],
  ['http://0xa9fea9fe/latest/meta-data', 'link-local'],
  ['http://100.64.0.1/hook', 'private'],
  ['http://192.0.2.1/hook', 'reserved'],
  ['http://240.0.0.1/hook', 'reserved'],
  ['http://[2001::1]/hook', 'reserved'],
  ['http://[fec0::1]/hook', 'unique-local'],
  ['http://[ff02::1]/hook', 'reserved'],
  // Found by the outsider review: loopback by name, whether or not the name resolves.
  ['http://foo.localhost/hook', 'loopback'],
  ['http://LOCALHOST./hook', 'loopback'],
  ['http://localhost.localdomain/hook', 'loopback'],
];

const REFUSED_WORDS =
  /--url (is|resolves to [^ ]+,) an? ([a-z-]+) address: Gatehouse does not send requests inside the network unless the operator allows it \(--webhook-allow-private /;

t.test('issue 57, item 7: every spelling of an internal target is refused when added, by webhook add, scim target add and the console', async (t) => {
  const s = await startTestServer(t);
  for (const [url, kind] of INSIDE) {
    const hook = await cli(s.dataDir, ['webhook', 'add', '--url', url]);
    t.equal(hook.code, 2, `webhook add ${url}: refused`);
    t.equal(REFUSED_WORDS.exec(hook.err)?.[2], kind, `${url}: a ${kind} address`);
    const scim = await cli(s.dataDir, ['scim', 'target', 'add', '--url', url, '--token-stdin'], { stdin: 'token\n' });
    t.equal(scim.code, 2, `scim target add ${url}: refused`);
    t.equal(REFUSED_WORDS.exec(scim.err)?.[2], kind);
    // The console's webhook and SCIM forms call these same core operations.
    await t.rejects(s.core.deliveries.addWebhook(s.core.shell, { url }), { code: 'invalid_input' }, `the console's webhook form: ${url}`);
    await t.rejects(s.core.scim.addTarget(s.core.shell, { url, token: 'token' }), { code: 'invalid_input' }, `the console's SCIM form: ${url}`);
  }
  t.equal((await s.db('webhook')).length, 0, 'no webhook stored');
  t.equal((await s.db('scim_target')).length, 0, 'no SCIM target stored');

  const lab = ['--webhook-allow-private', '198.18.0.0/15', '--webhook-allow-private', 'link-local'];
  t.equal((await cli(s.dataDir, [...lab, 'webhook', 'add', '--url', 'http://198.18.0.1/hook'])).code, 0, 'the benchmarking block, when named');
  t.equal((await cli(s.dataDir, [...lab, 'webhook', 'add', '--url', 'http://[::ffff:a9fe:a9fe]/hook'])).code, 0, 'link-local covers its mapped form');
  t.equal((await cli(s.dataDir, [...lab, 'webhook', 'add', '--url', 'http://[::127.0.0.1]/hook'])).code, 2, 'loopback is still refused');
  t.equal((await cli(s.dataDir, ['webhook', 'add', '--url', 'http://[64:ff9b::808:808]/hook'])).code, 0, 'NAT64 to a public address passes');
});

/** The last error of each message, by the URL it was for. */
async function errorsByUrl(s: Awaited<ReturnType<typeof startTestServer>>): Promise<Map<string, string>> {
  const rows = await s
    .db('delivery')
    .leftJoin('webhook', 'webhook.id', 'delivery.webhook_id')
    .leftJoin('scim_target', 'scim_target.id', 'delivery.scim_target_id')
    .select('webhook.url as hook', 'scim_target.url as target', 'delivery.last_error as error');
  return new Map(rows.map((r: { hook: string | null; target: string | null; error: string | null }) => [r.hook ?? r.target ?? '', r.error ?? '']));
}

t.test('issue 57, item 7: the address dialled is classified; a name resolving to loopback is refused unless allowed', async (t) => {
  const receiver = await startReceiver(t);
  const port = new URL(receiver.url).port;
  const s = await startTestServer(t, { rateLimits: false });
  // Rows as if added while the operator allowed them, or while their name resolved elsewhere.
  const dialled: Array<[string, RegExp]> = [
    [`http://localhost:${port}/hooks/gatehouse`, /^refused: (127\.0\.0\.1|::1) is a loopback address/],
    [`http://[::7f00:1]:${port}/hooks/gatehouse`, /^refused: ::7f00:1 is a loopback address/],
    [`http://[::ffff:0:7f00:1]:${port}/hooks/gatehouse`, /^refused: ::ffff:0:7f00:1 is a loopback address/],
    [`http://198.18.0.1:${port}/hooks/gatehouse`, /^refused: 198\.18\.0\.1 is a reserved address/],
    [`http://[64:ff9b:1::a9fe:a9fe]:${port}/hooks/gatehouse`, /^refused: 64:ff9b:1::a9fe:a9fe is a reserved address/],
    [`http://[::a9fe:a9fe]:${port}/hooks/gatehouse`, /^refused: ::a9fe:a9fe is a link-local address/],
  ];
  for (const [url] of dialled)
    await s
      .db('webhook')
      .insert({ reference_id: crypto.randomUUID(), url, description: '', events: '[]', secret: 'whsec_' + 'A'.repeat(32), created_at: Date.now() });
  const scimUrl = `http://[::127.0.0.1]:${port}/scim/v2`;
  await s
    .db('scim_target')
    .insert({ reference_id: crypto.randomUUID(), name: 'app', url: new URL(scimUrl).toString(), token: 'token', groups: '[]', created_at: Date.now() });
  await s.signup('dialled@example.com');
  await s.core.settle();
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');
  const errors = await errorsByUrl(s);
  for (const [url, refused] of dialled) t.match(errors.get(url), refused, url);
  t.match(errors.get(new URL(scimUrl).toString()), /^refused: ::7f00:1 is a loopback address/, 'a SCIM push to [::127.0.0.1] too');

  // The same name, with loopback allowed: added after its resolution is checked, and delivered.
  const allowed = await startTestServer(t, { webhookAllowPrivate: ['loopback'], rateLimits: false });
  const named = `http://localhost:${port}/hooks/gatehouse`;
  const refused = await cli(allowed.dataDir, ['webhook', 'add', '--url', named]);
  t.equal(refused.code, 2, 'without the exception, the shell refuses the name');
  t.match(refused.err, /--url resolves to (127\.0\.0\.1|::1), a loopback address/);
  const added = await cli(allowed.dataDir, ['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', named]);
  t.equal(added.code, 0, added.err);
  receiver.secret = added.json.secret;
  await allowed.signup('allowed@example.com');
  const got = await receiver.next();
  t.equal(got.verified?.type, 'account.created', 'delivered to the loopback receiver by name, when allowed');
});
