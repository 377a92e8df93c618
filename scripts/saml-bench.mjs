// SAML sign-ins beside OpenID Connect's, on one session and one run (figures, never pass/fail):
// the packaged executable on its default SQLite store, an account signed in on the pages (a
// cookie jar of one browser), then for `--duration` seconds each:
//   SAML SP-initiated sign-in   an AuthnRequest in (HTTP-Redirect), the hop to /saml/continue,
//                               the signed Response out (the form's HTML), 1 and N at a time
//   OIDC authorization code     /oidc/auth through login to the redirect with a code, and the
//                               code exchanged at /oidc/token (one at a time: the provider's
//                               interaction cookies are per flow)
// Usage: node scripts/saml-bench.mjs [--duration 5 --connections 4]
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync } from 'node:zlib';
import { authorizationCode, browser, REDIRECT } from './oidc-load.mjs';
import { cpuOf, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DURATION = arg('duration', 5);
const CONNECTIONS = arg('connections', 4);
const PASSWORD = 'benchmark password 1234';
const SP = 'https://app.example.com/saml';
const ACS = 'http://localhost:3999/saml/acs';

const authnRequest = () =>
  deflateRawSync(
    Buffer.from(
      `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomBytes(16).toString('hex')}" Version="2.0" IssueInstant="${new Date().toISOString()}" AssertionConsumerServiceURL="${ACS}"><saml:Issuer>${SP}</saml:Issuer></samlp:AuthnRequest>`,
    ),
  ).toString('base64');

/** One SP-initiated sign-in with the session in `b`: the request, the hop, the Response's form. */
async function samlSignin(b) {
  const first = await b.request(`/saml/sso?SAMLRequest=${encodeURIComponent(authnRequest())}&RelayState=bench`);
  await first.arrayBuffer();
  const hop = first.headers.get('location');
  if (first.status !== 303 || !hop) throw new Error(`/saml/sso answered ${first.status}`);
  const page = await b.request(hop);
  const html = await page.text();
  if (!html.includes('name="SAMLResponse"')) throw new Error(`no Response at ${hop}: ${page.status}`);
}

/** Runs `once` for DURATION seconds, `n` at a time: per second, p99, and server CPU per sign-in. */
async function measure(pid, n, once) {
  const ms = [];
  const cpu0 = cpuOf(pid);
  const until = performance.now() + DURATION * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (performance.now() < until) {
        const s = performance.now();
        await once();
        ms.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuOf(pid);
  ms.sort((x, y) => x - y);
  return {
    rps: ms.length / seconds,
    p99: ms[Math.floor(ms.length * 0.99)] ?? 0,
    cpu: ((cpu1.main - cpu0.main + cpu1.others - cpu0.others) * 1000) / ms.length,
  };
}

async function main() {
  const exe = path.join(root, 'dist', 'gatehouse');
  if (!fs.existsSync(exe)) throw new Error('dist/gatehouse is missing: run npm run build first');
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; node ${process.version}; ${DURATION} s per run`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-saml-bench-'));
  const cli = ['--data-dir', dataDir];
  const env = { ...process.env, BENCH_PW: PASSWORD };
  execFileSync(exe, [...cli, 'bootstrap-admin', '--email', 'bench@example.com', '--password-env', 'BENCH_PW'], { env, stdio: 'ignore' });
  execFileSync(exe, [...cli, 'saml', 'sp', 'add', '--entity-id', SP, '--acs-url', ACS, '--name', 'Bench'], { env, stdio: 'ignore' });
  const client = JSON.parse(
    execFileSync(exe, [...cli, '--json', 'client', 'add', '--name', 'Bench', '--redirect-uri', REDIRECT, '--first-party'], { env, encoding: 'utf8' }),
  );
  const server = spawnJsonLine(exe, ['serve', '--port', '0', ...cli, '--bcrypt-cost', '4', '--no-rate-limits']);
  try {
    const url = await server.ready;
    const b = browser(url);
    const signinPage = await (await b.request('/signin')).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(signinPage)[1];
    await b.request('/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, email: 'bench@example.com', password: PASSWORD }).toString(),
    });
    // Warm both paths (lazy libraries, the SAML key made at first use) before measuring.
    for (let i = 0; i < 20; i++) await samlSignin(b);
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const oidcRoundTrip = async () => {
      const c = await authorizationCode(b, client.client_id);
      const res = await fetch(`${url}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier }).toString(),
      });
      if (!res.ok) throw new Error(`token endpoint: ${res.status}`);
      await res.arrayBuffer();
    };
    for (let i = 0; i < 20; i++) await oidcRoundTrip();

    const pid = server.child.pid;
    const saml1 = await measure(pid, 1, () => samlSignin(b));
    const samlN = await measure(pid, CONNECTIONS, () => samlSignin(b));
    const oidc1 = await measure(pid, 1, oidcRoundTrip);
    const line = (name, r) =>
      console.log(`${name.padEnd(44)} ${r.rps.toFixed(1).padStart(7)} /s  p99 ${r.p99.toFixed(1).padStart(6)} ms  server CPU ${r.cpu.toFixed(0)} µs each`);
    line('SAML SP-initiated sign-in, 1 at a time', saml1);
    line(`SAML SP-initiated sign-in, ${CONNECTIONS} at a time`, samlN);
    line('OIDC code + token exchange, 1 at a time', oidc1);
    console.log(`SAML / OIDC, one at a time: ${(saml1.rps / oidc1.rps).toFixed(2)}`);
  } finally {
    await stop(server.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
