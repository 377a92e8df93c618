// Issue 34, item 13: an outsider's attack review of the four new wings (forward authentication,
// passkeys, invitations with the console, upstream providers). What was tried and held is listed in
// docs/security.md; these are the probes that no earlier test made.
import t from 'tap';
import { safeReturn } from '../../src/core';
import { cli } from '../helpers/cli';
import { countRows, PASSWORD, startTestServer } from '../helpers/server';

const guest = { token: null, client: '203.0.113.7', userAgent: 'attack' };

t.test('two tabs redeem one invitation link at once: one account, the other refused', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  const made = await cli(s.dataDir, ['--json', 'user', 'invite', 'twin@example.com', '--print-link']);
  t.equal(made.code, 0, made.err);
  const token = new URL(made.json.link).searchParams.get('invite')!;
  const accept = (name: string) => s.core.invitations.accept(guest, token, { name, password: PASSWORD, passwordConfirm: PASSWORD });
  const results = await Promise.allSettled([accept('Tab one'), accept('Tab two'), accept('Tab three')]);
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one redemption');
  // A tab that comes after the winner's commit is told the link was used (token_invalid); one that
  // raced it, whichever check caught it first.
  for (const r of results.filter((x) => x.status === 'rejected'))
    t.match((r as PromiseRejectedResult).reason, { code: /^(conflict|email_taken|not_found|invalid_input|token_invalid)$/ });
  t.equal(await countRows(s, 'user_account'), 2, 'one new account');
});

t.test('markup in every name a person or an administrator can set is text on the pages that show it', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  const evil = '<img src=x onerror=alert(1)>';
  t.equal((await cli(s.dataDir, ['client', 'add', '--name', evil, '--redirect-uri', 'https://app.example.com/cb'])).code, 0, 'a client named with markup');
  const up = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'corp', '--issuer', 'https://issuer.example', '--client-id', 'x', '--client-secret-env', 'S', '--display-name', evil],
    { env: { S: 'secret' } },
  );
  t.equal(up.code, 0, up.err);
  const signin = await s.call('GET', '/signin', { headers: { accept: 'text/html' } });
  t.notMatch(signin.text, /<img src=x/, '/signin: the provider button shows the name as text');
  t.match(signin.text, /Continue with (<span translate="no">)?&lt;img src=x onerror=alert\(1\)&gt;/);
  for (const bad of ['/<script>', '/a"onmouseover="x']) {
    const r = await cli(s.dataDir, ['app', 'add', '--host', 'files.example.com', '--bypass-path', bad]);
    t.not(r.code, 0, `a bypass path ${bad} is refused (${r.err.trim()})`);
  }
  const host = await cli(s.dataDir, ['app', 'add', '--host', '<b>.example.com']);
  t.not(host.code, 0, 'a host with markup is refused');
});

t.test('rd: header injection, whitespace and look-alike schemes never leave the cookie domain', async (t) => {
  const PUBLIC = 'https://auth.example.com';
  for (const bad of [
    'https://grafana.example.com/\r\nSet-Cookie: x=1',
    '\thttps://evil.example/',
    ' //evil.example/',
    'https:\\\\evil.example\\',
    'https:/\\evil.example/',
    'HTTPS://EVIL.EXAMPLE/',
    'javascript://grafana.example.com/%0aalert(1)',
    'https://grafana.example.com%2f@evil.example/',
    'https://evil.example#@grafana.example.com/',
    'https://evil.example?@grafana.example.com/',
  ]) {
    const got = safeReturn(bad, PUBLIC, 'example.com');
    t.ok(
      got === null || new URL(got).hostname.endsWith('.example.com') || new URL(got).hostname === 'example.com',
      `${JSON.stringify(bad)} → ${JSON.stringify(got)}`,
    );
    if (got) t.notMatch(got, /[\r\n\t]/, 'no control characters in a Location');
  }
});
