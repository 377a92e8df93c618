// A SCIM push target whose URL carries a query string (`…/scim/v2?tenant=t1`): Gatehouse's paths
// go before the query (`/scim/v2/Users?tenant=t1`), never after it (`/scim/v2?tenant=t1/Users`),
// and a lookup's own query joins the target's. The target here is scimmy (test/helpers/scim-target).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { cli } from '../helpers/cli';
import { withAdmin } from '../helpers/server';
import { startScimTarget } from '../helpers/scim-target';
import { endpointUrl } from '../../src/deliveries/scim-push';

t.test('paths go before the query of a target URL', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['https://app.example/scim/v2?tenant=t1', '/Users', 'https://app.example/scim/v2/Users?tenant=t1'],
    ['https://app.example/scim/v2/?tenant=t1', '/Groups/a%2Fb', 'https://app.example/scim/v2/Groups/a%2Fb?tenant=t1'],
    [
      'https://app.example/scim/v2?tenant=t1',
      '/Users?filter=externalId%20eq%20%22x%22&count=2',
      'https://app.example/scim/v2/Users?tenant=t1&filter=externalId%20eq%20%22x%22&count=2',
    ],
    ['https://app.example/scim/v2/', '/Users?count=2', 'https://app.example/scim/v2/Users?count=2'],
    ['https://app.example/scim/v2', '/Users', 'https://app.example/scim/v2/Users'],
  ];
  for (const [base, path, wanted] of cases) t.equal(endpointUrl(base, path).href, wanted, `${base} + ${path}`);
});

t.test('a target whose URL has a query string gets the people', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const target = await startScimTarget(t);
  const added = await cli(
    s.dataDir,
    ['--json', '--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', `${target.url}?tenant=t1`, '--token-stdin', '--name', 'app'],
    { stdin: `${target.token}\n` },
  );
  t.equal(added.code, 0, added.err);
  await s.core.settle();
  t.same(
    [...target.store.users.values()].map((u) => u.userName),
    ['admin'],
    'the administrator is there',
  );
  t.ok(target.requests.length > 0 && target.requests.every((r) => /^[A-Z]+ \/scim\/v2\/(Users|Groups)(\/|$)/.test(r)), target.requests.join(', '));
  const shown = await cli(s.dataDir, ['--json', 'deliveries']);
  t.notMatch(shown.out, /HTTP 404/, 'no failed delivery');
});

// Found by the outsider review: a target that answered the id "." or ".." for a new person was
// later sent DELETE /scim/v2/Users/?… (the collection) or DELETE /scim/v2/?… (its base).
t.test('an id that is a dot segment names no resource: the push fails, and no such path is ever asked', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/scim+json');
      if (req.method === 'POST') res.writeHead(201).end(JSON.stringify({ id: '..' }));
      else if (req.method === 'GET') res.writeHead(200).end(JSON.stringify({ Resources: [], totalResults: 0 }));
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scim/v2?tenant=t1`;
  const added = await cli(
    s.dataDir,
    ['--json', '--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', url, '--token-stdin', '--name', 'dots'],
    {
      stdin: 'token\n',
    },
  );
  t.equal(added.code, 0, added.err);
  await s.core.settle();
  t.ok(
    seen.some((r) => r.startsWith('POST /scim/v2/Users')),
    'the person was offered',
  );
  t.notOk(
    seen.some((r) => /^(PUT|DELETE|PATCH) \/scim\/v2\/(Users\/)?(\?|$)/.test(r)),
    `nothing sent to the collection or the base: ${seen.join(', ')}`,
  );
  const failed = await s.db('delivery').whereNotNull('last_error').first();
  t.match(failed?.last_error, /names no resource/, 'the delivery says why it failed');
  t.equal((await s.db('scim_pushed')).filter((r: { remote_id: string }) => r.remote_id === '..').length, 0, 'no such id stored');
});

// Found by the outsider review: a public target over plain http was accepted, its bearer token in clear.
t.test('a push target on a public address must be https; plain http is for an address inside the network', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  for (const url of ['http://8.8.8.8/scim/v2', 'http://[2606:4700::1111]/scim/v2']) {
    const r = await cli(s.dataDir, ['scim', 'target', 'add', '--url', url, '--token-stdin'], { stdin: 'token\n' });
    t.equal(r.code, 2, `${url}: refused`);
    t.match(r.err, /must be https: the target's token would cross the network in clear/);
    await t.rejects(s.core.scim.addTarget(s.core.shell, { url, token: 'token' }), { code: 'invalid_input' }, "and from the console's form");
  }
  t.equal((await s.db('scim_target')).length, 0, 'nothing stored');
});
