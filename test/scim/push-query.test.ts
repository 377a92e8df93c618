// A SCIM push target whose URL carries a query string (`…/scim/v2?tenant=t1`): Gatehouse's paths
// go before the query (`/scim/v2/Users?tenant=t1`), never after it (`/scim/v2?tenant=t1/Users`),
// and a lookup's own query joins the target's. The target here is scimmy (test/helpers/scim-target).
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
