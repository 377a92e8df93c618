// CORS: an exact allow-list of origins, preflight 204, never credentials; without the flag, no
// CORS headers at all.
import t from 'tap';
import { loadConfig } from '../../src/config';
import { startTestServer, withAdmin } from '../helpers/server';

const APP = 'https://app.example.com';

const preflight = (url: string, origin: string, method = 'PATCH') =>
  fetch(`${url}/api/usergroup/x`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });

t.test('an allowed origin: preflight 204 with methods and headers, answers readable, no credentials', async (t) => {
  const s = await withAdmin(t, { corsOrigin: [APP, 'http://localhost:5173'] });
  const pre = await preflight(s.url, APP);
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), APP);
  t.match(pre.headers.get('access-control-allow-methods'), /PATCH/);
  t.match(pre.headers.get('access-control-allow-headers'), /Authorization/);
  t.match(pre.headers.get('access-control-allow-headers'), /Content-Type/);
  t.equal(pre.headers.get('access-control-allow-credentials'), null, 'never credentials');

  const get = await fetch(`${s.url}/api/me`, { headers: { origin: APP, authorization: `Bearer ${s.adminToken}` } });
  t.equal(get.status, 200);
  t.equal(get.headers.get('access-control-allow-origin'), APP);
  t.match(get.headers.get('vary'), /Origin/);
  const refused = await fetch(`${s.url}/api/me`, { headers: { origin: APP } });
  t.equal(refused.status, 401);
  t.equal(refused.headers.get('access-control-allow-origin'), APP, 'errors are readable too');
  t.match(refused.headers.get('access-control-expose-headers'), /WWW-Authenticate/);
  const second = await fetch(`${s.url}/ping`, { headers: { origin: 'http://localhost:5173' } });
  t.equal(second.headers.get('access-control-allow-origin'), 'http://localhost:5173');
});

t.test('other origins, and no flag: no CORS headers', async (t) => {
  const s = await startTestServer(t, { corsOrigin: APP });
  for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.com', 'http://app.example.com', 'null']) {
    const pre = await preflight(s.url, origin);
    t.equal(pre.headers.get('access-control-allow-origin'), null, `${origin}: no allow-origin`);
    t.equal((await fetch(`${s.url}/ping`, { headers: { origin } })).headers.get('access-control-allow-origin'), null);
  }
  const plain = await startTestServer(t);
  const pre = await preflight(plain.url, APP);
  t.equal(pre.headers.get('access-control-allow-origin'), null, 'without --cors-origin: none');
  t.not(pre.status, 204);
});

t.test('--cors-origin takes exact origins only', async (t) => {
  for (const bad of ['*', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://x.example.com', 'app.example.com']) {
    t.throws(() => loadConfig({ corsOrigin: bad }, {}), { code: 'invalid_input' }, bad);
  }
  t.same(loadConfig({}, { GATEHOUSE_CORS_ORIGIN: `${APP}, http://localhost:5173` }).corsOrigin, [APP, 'http://localhost:5173'], 'env: comma-separated');
  t.same(loadConfig({}, {}).corsOrigin, []);
});
