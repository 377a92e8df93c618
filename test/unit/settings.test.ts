// Settings are declared once (src/config/settings.ts SETTINGS): the commander options, --help and the table
// in docs/configuration.md come from that declaration. This keeps the docs' copy equal and checks
// that each flag reaches its setting, beats the environment, and that the environment still counts.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { testCertificate } from '../helpers/ldap';
import { defaultPublicUrl, loadConfig, passkeyObstacle, settingOptions, settingsTable } from '../../src/config';
import { cli } from '../helpers/cli';
import { tempDir } from '../helpers/server';

t.test('docs/configuration.md holds the table the declaration makes', async (t) => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
  const copy = /<!-- settings:[^\n]*-->\n([\s\S]*?)\n<!-- end of settings -->/.exec(doc)?.[1];
  t.equal(copy, settingsTable(), "regenerate with: node -e \"require('tsx/cjs'); console.log(require('./src/config.ts').settingsTable())\"");
});

t.test('every serve option and its environment variable appear in serve --help', async (t) => {
  const r = await cli(tempDir(t), ['serve', '--help']);
  t.equal(r.code, 0);
  for (const o of [...settingOptions('serve'), ...settingOptions('global')]) {
    t.match(r.out, o.flags.split(' ')[0], o.key);
    t.match(r.out, /\[env GATEHOUSE_[A-Z_]+/, o.key);
  }
});

t.test('a flag beats the environment; --no-x turns off what is on', async (t) => {
  const c = loadConfig({ port: '7000', rateLimits: false }, { GATEHOUSE_PORT: '8000', GATEHOUSE_PAGES: 'false' });
  t.equal(c.port, 7000);
  t.equal(c.rateLimits, false);
  t.equal(c.pages, false, 'the environment counts where no flag was given');
});

t.test('the default public URL names localhost for a loopback address; passkey obstacles are said', async (t) => {
  t.equal(defaultPublicUrl('127.0.0.1', 6336), 'http://localhost:6336');
  t.equal(defaultPublicUrl('::1', 6336), 'http://localhost:6336');
  t.equal(defaultPublicUrl('[::1]', 80), 'http://localhost:80');
  t.equal(defaultPublicUrl('0.0.0.0', 6336), 'http://0.0.0.0:6336');
  t.equal(defaultPublicUrl('fd00::1', 6336), 'http://[fd00::1]:6336');
  t.equal(loadConfig({}, {}).publicUrl, 'http://localhost:6336');
  t.equal(passkeyObstacle('http://localhost:6336'), null);
  t.equal(passkeyObstacle('http://app.localhost:6336'), null);
  t.equal(passkeyObstacle('https://id.example.com'), null);
  t.match(passkeyObstacle('http://127.0.0.1:6336'), /IP address/);
  t.match(passkeyObstacle('http://[::1]:6336'), /IP address/);
  t.match(passkeyObstacle('http://id.example.com'), /only on https/);
});

t.test('settings that only work together are refused at load when one is missing', async (t) => {
  const { cert, key } = testCertificate(t);
  const dir = t.testdir({ 'cert.pem': cert, 'key.pem': key });
  t.throws(() => loadConfig({}, { GATEHOUSE_LDAP_TLS_CERT: `${dir}/cert.pem` }), { code: 'invalid_input', message: /go together/ });
  t.throws(() => loadConfig({ ldapTlsKey: `${dir}/key.pem` }, {}), { code: 'invalid_input', message: /go together/ });
  t.throws(() => loadConfig({ ldapsPort: '6637' }, {}), { code: 'invalid_input', message: /needs/ });
  t.doesNotThrow(() => loadConfig({ ldapsPort: '6637', ldapTlsKey: `${dir}/key.pem`, ldapTlsCert: `${dir}/cert.pem` }, {}));
});

// Found by the outsider review: a *_FILE variable naming a PEM key made its content the "path",
// and the error printed the first 200 characters of the key (of any file named so).
t.test('a secret read from a *_FILE file is never quoted back; a PEM file there is the PEM', async (t) => {
  const { cert, key } = testCertificate(t);
  const secretLine = 'root:$6$not-a-real-hash-but-secret:19000:0:99999:7:::';
  const dir = t.testdir({ 'cert.pem': cert, 'key.pem': key, shadow: `${secretLine}\n` });
  const c = loadConfig({}, { GATEHOUSE_LDAP_TLS_KEY_FILE: `${dir}/key.pem`, GATEHOUSE_LDAP_TLS_CERT: `${dir}/cert.pem` });
  t.equal(c.ldapTlsKey, key.trim(), 'the PEM in the file is the key');
  try {
    loadConfig({}, { GATEHOUSE_LDAP_TLS_KEY_FILE: `${dir}/shadow`, GATEHOUSE_LDAP_TLS_CERT: `${dir}/cert.pem` });
    t.fail('refused');
  } catch (err) {
    t.match((err as Error).message, /GATEHOUSE_LDAP_TLS_KEY_FILE: what .*shadow holds is not a valid value for --ldap-tls-key/);
    t.notMatch((err as Error).message, /not-a-real-hash|root:/, 'nothing of the file is quoted');
  }
});

t.test('a PEM file that is not a certificate or a key OpenSSL reads is refused at load, naming the setting', async (t) => {
  const { cert, key } = testCertificate(t);
  const broken = '-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n';
  const dir = t.testdir({ 'cert.pem': cert, 'key.pem': key, 'broken.pem': broken });
  t.throws(() => loadConfig({ ldapTlsCert: `${dir}/cert.pem`, ldapTlsKey: `${dir}/broken.pem` }, {}), {
    code: 'invalid_input',
    message: /^--ldap-tls-key: .*broken\.pem does not hold a private key OpenSSL can read$/,
  });
  t.throws(() => loadConfig({ ldapTlsCert: `${dir}/key.pem`, ldapTlsKey: `${dir}/key.pem` }, {}), {
    message: /--ldap-tls-cert: .* does not hold a certificate/,
  });
});
