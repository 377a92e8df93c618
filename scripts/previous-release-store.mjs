// Makes test/fixtures/previous-release/: a small store made by an executable of an earlier build
// (the last one on the `sqlite3` package, before the store moved to `node:sqlite`), and the
// credentials in it, for test/store/previous-release.test.ts to open it with today's code and use
// each one.
//
//   npm run build && node scripts/previous-release-store.mjs [path/to/gatehouse]
//
// It made the committed fixture from commit 3f8b881 (the build before the move); run it again only
// to replace the fixture, with an executable built from that commit (git worktree add, npm ci, npm
// run build). The executable's own commands and its HTTP server fill the store, as a person would:
// an administrator, a person with a password and TOTP, their session (its refresh token), an API
// key, an app password, an OpenID Connect client with a secret, and a rotated pair of signing keys.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { freePort, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const exe = path.resolve(process.argv[2] ?? path.join(root, 'dist', 'gatehouse'));
const out = path.join(root, 'test', 'fixtures', 'previous-release');
const PASSWORD = 'previous release password 1';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-previous-'));
const env = { ...process.env, PW: PASSWORD };

const gatehouse = (...args) => {
  const text = execFileSync(exe, ['--data-dir', dir, '--json', ...args], { env, encoding: 'utf8' });
  return text ? JSON.parse(text) : null;
};

/** RFC 6238 (SHA-1, 6 digits, 30 s), the code an authenticator app shows now. */
function totp(secretBase32) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of secretBase32.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1000000).padStart(6, '0');
}

try {
  const version = gatehouse('version');
  gatehouse('bootstrap-admin', '--email', 'admin@example.com', '--name', 'Ada Admin', '--password-env', 'PW');
  gatehouse('user', 'create', '--email', 'ann@example.com', '--name', 'Ann', '--password-env', 'PW');
  const appPassword = gatehouse('user', 'app-password', 'add', 'ann@example.com', '--name', 'mail').secret;
  const apiKey = gatehouse('user', 'api-key', 'add', 'admin@example.com', '--name', 'script').key;
  const client = gatehouse('client', 'add', '--name', 'Reports', '--credentials');
  gatehouse('keys', 'rotate');

  const port = await freePort();
  const { child: server, ready } = spawnJsonLine(exe, ['--data-dir', dir, 'serve', '--port', String(port)]);
  await ready;
  const action = async (name, attributes, token) => {
    const r = await fetch(`http://127.0.0.1:${port}/action/user_account/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ attributes }),
    });
    const body = await r.json();
    if (r.status !== 200) throw new Error(`${name}: ${r.status} ${JSON.stringify(body)}`);
    const stored = Object.fromEntries(body.filter((i) => i.ResponseType === 'client.store.set').map((i) => [i.Attributes.key, i.Attributes.value]));
    return { ...stored, secret: body.find((i) => i.ResponseType === 'totp.secret')?.Attributes.secret };
  };
  let totpSecret, session;
  try {
    const first = await action('signin', { email: 'ann@example.com', password: PASSWORD });
    totpSecret = (await action('totp_enroll', { password: PASSWORD }, first.token)).secret;
    await action('totp_confirm', { otp: totp(totpSecret) }, first.token);
    // The session kept in the fixture: a sign-in with both factors (the next step's code), and its refresh token.
    await new Promise((resolve) => setTimeout(resolve, 30000 - (Date.now() % 30000) + 100));
    session = await action('signin', { email: 'ann@example.com', password: PASSWORD, otp: totp(totpSecret) });
  } finally {
    await stop(server);
  }

  const file = path.join(dir, 'gatehouse.sqlite');
  if (fs.existsSync(`${file}-wal`) && fs.statSync(`${file}-wal`).size > 0) throw new Error('the store kept a -wal file after the server stopped');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'gatehouse.sqlite.gz'), zlib.gzipSync(fs.readFileSync(file), { level: 9 }));
  const credentials = {
    made_by: version,
    // The clock the test sets (sessions and refresh tokens expire; a TOTP code is of a moment).
    made_at: new Date().toISOString(),
    password: PASSWORD,
    administrator: 'admin@example.com',
    person: 'ann@example.com',
    totp_secret: totpSecret,
    refresh_token: session.refresh_token,
    api_key: apiKey,
    app_password: appPassword,
    client_id: client.client_id,
    client_secret: client.client_secret,
  };
  fs.writeFileSync(path.join(out, 'credentials.json'), JSON.stringify(credentials, null, 2) + '\n');
  console.log(`wrote ${path.relative(root, out)} (made by ${JSON.stringify(version)})`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
