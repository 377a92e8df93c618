// Response hygiene: no-store where tokens or secrets travel, nosniff everywhere, no banners,
// correct content types.
import t from 'tap';
import { PASSWORD, withAdmin } from '../helpers/server';

t.test('headers on every kind of response', async (t) => {
  const s = await withAdmin(t);
  const replies = {
    signin: await s.action('user_account', 'signin', { email: 'admin@example.com', password: PASSWORD }),
    totp: await s.action('user_account', 'totp_enroll', { password: PASSWORD }, s.adminToken),
    error: await s.action('user_account', 'signin', { email: 'admin@example.com', password: 'nope nope nope' }),
    list: await s.call('GET', '/api/user_account', { token: s.adminToken }),
    jsonapiError: await s.call('GET', '/api/nosuch', { token: s.adminToken }),
    stats: await s.call('GET', '/statistics', { token: s.adminToken }),
    ping: await s.call('GET', '/ping'),
    notFound: await s.call('GET', '/nothing'),
  };
  for (const [name, r] of Object.entries(replies)) {
    t.equal(r.headers.get('x-content-type-options'), 'nosniff', `${name}: nosniff`);
    t.equal(r.headers.get('cache-control'), 'no-store', `${name}: no-store`);
    t.equal(r.headers.get('x-powered-by'), null, `${name}: no X-Powered-By`);
    t.equal(r.headers.get('server'), null, `${name}: no Server banner`);
    // (Random token values are left out: one holds "KoA" or "v1.2.3" by chance now and then.)
    const text = r.text.replace(/"(value|secret|uri)":"[^"]*"/g, '"$1":""');
    t.notMatch(text, /koa|node\.js|v\d+\.\d+\.\d+/i, `${name}: no version in the body`);
  }
  t.match(replies.signin.headers.get('content-type'), /^application\/json/);
  t.match(replies.error.headers.get('content-type'), /^application\/json/);
  t.equal(replies.list.headers.get('content-type'), 'application/vnd.api+json');
  t.equal(replies.jsonapiError.headers.get('content-type'), 'application/vnd.api+json');
  t.match(replies.stats.headers.get('content-type'), /^application\/json/);
  t.match(replies.ping.headers.get('content-type'), /^text\/plain/);
  t.ok(replies.signin.headers.get('x-request-id'), 'a request id to find the log line');
});
