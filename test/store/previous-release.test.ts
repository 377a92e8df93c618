// A store made by the build before the store moved from the `sqlite3` package to `node:sqlite`
// (test/fixtures/previous-release, made by that build's executable: scripts/previous-release-store.mjs)
// opens as it is with today's code, and every credential in it still works: both passwords, the
// person's TOTP, their session's refresh token, an API key, an app password (an LDAP bind), an
// OpenID Connect client's secret, and the signing keys (the JWKS, and tokens signed with them).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Client } from 'ldapts';
import { startLdap } from '../../src/ldap/server';
import { manualClock, totpAt } from '../helpers/clock';
import { freePort } from '../helpers/browser';
import { startTestServer, tempDir, tokenOf, TEST_STORE } from '../helpers/server';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'previous-release');
const made = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'credentials.json'), 'utf8')) as {
  made_by: { sqlite: string; commit: string };
  made_at: string;
  password: string;
  administrator: string;
  person: string;
  totp_secret: string;
  refresh_token: string;
  api_key: string;
  app_password: string;
  client_id: string;
  client_secret: string;
};

t.test(
  'a store made by the previous release (sqlite3) opens, and every credential in it works',
  { skip: TEST_STORE === 'postgres' && 'a SQLite file' },
  async (t) => {
    t.equal(made.made_by.sqlite, '3.52.0', 'the fixture was made by the sqlite3 package (its bundled SQLite)');
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'gatehouse.sqlite'), zlib.gunzipSync(fs.readFileSync(path.join(FIXTURE, 'gatehouse.sqlite.gz'))), { mode: 0o600 });
    // A few minutes after the fixture was made: its session is still open, and the next TOTP step is a new code.
    const clock = manualClock(Date.parse(made.made_at) + 5 * 60_000);
    const port = await freePort();
    const s = await startTestServer(t, { dataDir: dir, port, publicUrl: `http://127.0.0.1:${port}` }, dir, { clock });

    t.ok(tokenOf(await s.action('user_account', 'signin', { email: made.administrator, password: made.password })), "the administrator's password");
    const noCode = await s.action('user_account', 'signin', { email: made.person, password: made.password });
    t.notOk(noCode.status === 200 && JSON.stringify(noCode.body).includes('"token"'), 'the person has TOTP on: a password alone is not a session');
    const both = await s.action('user_account', 'signin', { email: made.person, password: made.password, otp: await totpAt(made.totp_secret, clock) });
    t.equal(both.status, 200, both.status === 200 ? "the person's password and a TOTP code" : both.text);
    const token = tokenOf(both);
    const me = await s.call('GET', '/api/user_account', { token });
    t.equal(me.status, 200, 'the new session reads the API');
    t.match(JSON.stringify(me.body), made.person);

    const refreshed = await s.action('user_account', 'refresh', { refresh_token: made.refresh_token });
    t.equal(refreshed.status, 200, refreshed.status === 200 ? "the stored session's refresh token" : refreshed.text);
    t.ok(tokenOf(refreshed));

    const byKey = await s.call('GET', '/api/user_account', { token: made.api_key });
    t.equal(byKey.status, 200, 'the API key');
    t.match(JSON.stringify(byKey.body), made.administrator);

    const ldap = await startLdap(
      s.core,
      { host: '127.0.0.1', port: 0, tlsPort: null, tls: null, baseDn: 'dc=example,dc=com', readers: [], allowInsecureBind: true },
      s.core.logger,
    );
    t.teardown(() => ldap.close());
    const client = new Client({ url: `ldap://127.0.0.1:${ldap.port}` });
    await client.bind('uid=ann,ou=people,dc=example,dc=com', made.app_password);
    t.pass('the app password binds over LDAP (the account has TOTP: its password alone would not)');
    await client.unbind();

    const basic = `Basic ${Buffer.from(`${made.client_id}:${made.client_secret}`).toString('base64')}`;
    const grant = await fetch(`${s.config.publicUrl}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    const granted = (await grant.json()) as { access_token?: string };
    t.equal(grant.status, 200, grant.status === 200 ? "the client's secret" : JSON.stringify(granted));
    const jwks = (await (await fetch(`${s.config.publicUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
    t.equal(jwks.keys.length, 2, 'both signing keys (the rotated one still verifies)');
    const kid = JSON.parse(Buffer.from(String(granted.access_token).split('.')[0], 'base64url').toString()).kid;
    t.ok(
      jwks.keys.some((k) => k.kid === kid),
      'tokens are signed with a key from the store',
    );
  },
);
