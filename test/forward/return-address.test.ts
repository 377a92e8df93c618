// After signing in, `rd` sends the browser back only to the cookie domain (or Gatehouse itself):
// no open redirect, whatever the address looks like once a browser has parsed it.
import t from 'tap';
import { safeReturn } from '../../src/core';
import { PASSWORD, startTestServer } from '../helpers/server';

const PUBLIC = 'https://auth.example.com';

t.test('safeReturn: the cookie domain and below, https, or Gatehouse itself', async (t) => {
  const ok = (rd: string, domain: string | null = 'example.com', pub = PUBLIC) => safeReturn(rd, pub, domain);
  t.equal(ok('https://grafana.example.com/d/1?x=1'), 'https://grafana.example.com/d/1?x=1');
  t.equal(ok('https://example.com/'), 'https://example.com/');
  t.equal(ok('https://auth.example.com/account', null), 'https://auth.example.com/account', 'Gatehouse itself, without a cookie domain');
  for (const bad of [
    '//evil.example/',
    '/\\evil.example/',
    'javascript:alert(1)',
    'data:text/html,x',
    'https://evil.example\\@grafana.example.com/',
    'https://grafana.example.com@evil.example/',
    'https://user:pw@grafana.example.com/',
    'https://example.com.evil.net/',
    'https://badexample.com/',
    'https://grafana.example.com.evil.net/',
    'http://grafana.example.com/',
    'ftp://grafana.example.com/',
    'https://grafana.еxample.com/',
    'grafana.example.com',
    '',
    'x'.repeat(5000),
  ]) {
    t.equal(ok(bad), null, `refused: ${JSON.stringify(bad.slice(0, 50))}`);
  }
  t.equal(ok('https://grafana.example.com/', null), null, 'no cookie domain: only Gatehouse itself');
  t.equal(ok('http://app.example.com/', 'example.com', 'http://auth.example.com'), 'http://app.example.com/', 'http while Gatehouse itself is on http');
  t.equal(safeReturn(['https://grafana.example.com/'], PUBLIC, 'example.com'), null, 'a repeated query parameter is not an address');
});

t.test('the sign-in page follows a good rd, ignores a bad one, and keeps it through a refusal', async (t) => {
  const s = await startTestServer(t, { publicUrl: 'http://auth.gh.test:6336', cookieDomain: 'gh.test' });
  await s.signup('admin@example.com');
  const form = await fetch(`${s.url}/signin?rd=${encodeURIComponent('http://app.gh.test/x?y=1')}`);
  const html = await form.text();
  t.match(html, /<input type="hidden" name="rd" value="http:\/\/app\.gh\.test\/x\?y=1" \/>/, 'carried in the form');
  const evil = await (await fetch(`${s.url}/signin?rd=${encodeURIComponent('https://evil.example/')}`)).text();
  t.notMatch(evil, /name="rd"/, 'a bad rd is dropped');

  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
  const cookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const post = (rd: string, password = PASSWORD) =>
    fetch(`${s.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf, email: 'admin@example.com', password, rd }).toString(),
    });
  const wrong = await post('http://app.gh.test/x?y=1', 'wrong password 123');
  t.match(await wrong.text(), /name="rd" value="http:\/\/app\.gh\.test\/x\?y=1"/, 'kept through a wrong password');
  const good = await post('http://app.gh.test/x?y=1');
  t.equal(good.status, 303);
  t.equal(good.headers.get('location'), 'http://app.gh.test/x?y=1', 'back to the app');
  const session = good.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!;
  t.match(session, /Domain=gh\.test/, 'the session cookie is on the cookie domain');
  const bad = await post('https://evil.example/');
  t.equal(bad.headers.get('location'), '/account', 'a bad rd lands on /account');

  const signedIn = `${cookie}; ${session.split(';')[0]}`;
  const again = await fetch(`${s.url}/signin?rd=${encodeURIComponent('http://files.gh.test/')}`, { redirect: 'manual', headers: { cookie: signedIn } });
  t.equal(again.headers.get('location'), 'http://files.gh.test/', 'already signed in: straight back');
  const evilAgain = await fetch(`${s.url}/signin?rd=${encodeURIComponent('//evil.example')}`, { redirect: 'manual', headers: { cookie: signedIn } });
  t.equal(evilAgain.headers.get('location'), '/account');
});

t.test('--cookie-domain must hold the public URL; https names the cookie __Secure-', async (t) => {
  await t.rejects(startTestServer(t, { publicUrl: 'https://auth.other.org', cookieDomain: 'example.com' }), /does not hold the public URL/);
  await t.rejects(startTestServer(t, { publicUrl: 'https://auth.example.com', cookieDomain: 'https://example.com' }), /takes a domain/);
  const s = await startTestServer(t, { publicUrl: 'https://auth.example.com', cookieDomain: 'example.com' });
  await s.signup('admin@example.com');
  const form = await fetch(`${s.url}/signin`);
  const html = await form.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
  const cookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const r = await fetch(`${s.url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: 'https://auth.example.com' },
    body: new URLSearchParams({ csrf, email: 'admin@example.com', password: PASSWORD }).toString(),
  });
  const session = r.headers.getSetCookie().find((c) => c.includes('gatehouse_session='));
  t.match(session, /^__Secure-gatehouse_session=.*Domain=example\.com/);
  t.match(session, /Secure/);
});
