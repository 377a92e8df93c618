// What nested groups cost where a person's groups are read (figures, never pass/fail): the packaged
// executable on two fresh stores of the same size, 1,000 managed groups each, and one person who
// is in all 1,000:
//   flat      the person is a direct member of every group;
//   nested    the groups are 100 chains of 10 (each inside the one above it: nine nestings), and
//             the person is a direct member of the bottom group of each chain only.
// Measured on each, in alternating turns:
//   groups claim/s     userinfo (GET /oidc/me) with the `groups` scope: every group's name;
//   memberOf search/s  the LDAP directory, (uid=…) asking for memberOf (every group, 1,000 DNs);
//   forward-auth/s     GET /auth/request for an app open to one group: the top of a chain
//                      (nested) or one group (flat).
// Usage: node scripts/nesting-bench.mjs [--exe dist/gatehouse] [--duration 4] [--connections 8] [--turns 2]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Client } from 'ldapts';
import { benchServeArgs, freePort, spawnJsonLine, stop } from './process.mjs';
import { authorizationCode, browser, REDIRECT } from './oidc-load.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EXE = arg('exe', path.join(root, 'dist', 'gatehouse'));
const DURATION = Number(arg('duration', 4));
const CONNECTIONS = Number(arg('connections', 8));
const TURNS = Number(arg('turns', 2));
const PASSWORD = 'benchmark password 1234';
const BASE = 'dc=example,dc=com';
const CHAINS = 100;
const DEPTH = 10;

async function api(url, method, body, token) {
  const res = await fetch(url, {
    method,
    headers: {
      'content-type': url.includes('/action/') ? 'application/json' : 'application/vnd.api+json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

const signin = async (url, email) =>
  (await api(`${url}/action/user_account/signin`, 'POST', { attributes: { email, password: PASSWORD } })).find((i) => i.Attributes.key === 'token').Attributes
    .value;

/** A store of `shape`, served: its URL, LDAP port, the person's tokens, and the group an app opens to. */
async function start(shape) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-nesting-${shape}-`));
  const cli = (...args) => execFileSync(EXE, ['--data-dir', dir, ...args], { encoding: 'utf8', env: { ...process.env, PW: PASSWORD } });
  cli('bootstrap-admin', '--email', 'admin@bench.example', '--password-env', 'PW');
  cli('user', 'create', '--email', 'person@bench.example', '--password-env', 'PW');
  cli('user', 'set-username', 'person@bench.example', 'person');
  const ldapPort = await freePort();
  const server = spawnJsonLine(EXE, [...benchServeArgs(dir, 4, '--trust-proxy', '127.0.0.1', '--ldap-port', String(ldapPort), '--ldap-base-dn', BASE)]);
  started.push({ server, dir });
  const url = await server.ready;
  const admin = await signin(url, 'admin@bench.example');
  const person = (await api(`${url}/api/me`, 'GET', undefined, await signin(url, 'person@bench.example'))).data.id;
  const groups = [];
  for (let c = 0; c < CHAINS; c++) {
    const chain = [];
    for (let d = 0; d < DEPTH; d++) {
      const made = await api(`${url}/api/usergroup`, 'POST', { data: { type: 'usergroup', attributes: { name: `chain${c}-level${d}` } } }, admin);
      chain.push(made.data.id);
    }
    groups.push(chain);
  }
  const link = (group, rel, type, id) => api(`${url}/api/usergroup/${group}/relationships/${rel}`, 'POST', { data: [{ type, id }] }, admin);
  for (const chain of groups) {
    if (shape === 'nested') {
      for (let d = 0; d + 1 < DEPTH; d++) await link(chain[d], 'groups', 'usergroup', chain[d + 1]);
      await link(chain[DEPTH - 1], 'members', 'user_account', person);
    } else {
      for (const g of chain) await link(g, 'members', 'user_account', person);
    }
  }
  // The app opens to the top of the last chain (nested: reached through nine nestings).
  cli('app', 'add', '--host', 'app.bench.test', '--allow-group', groups[CHAINS - 1][0]);
  const client = JSON.parse(cli('--json', 'client', 'add', '--name', 'Bench', '--redirect-uri', REDIRECT, '--first-party'));
  const b = browser(url);
  const page = await (await b.request('/signin')).text();
  await b.request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(page)[1], email: 'person@bench.example', password: PASSWORD }).toString(),
  });
  const { code, verifier } = await authorizationCode(b, client.client_id, 'openid groups');
  const tokens = await (
    await fetch(`${url}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
    })
  ).json();
  const info = await (await fetch(`${url}/oidc/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).json();
  if (info.groups?.length !== CHAINS * DEPTH + 1) throw new Error(`${shape}: the groups claim has ${info.groups?.length} groups`);
  return { dir, server, url, ldapPort, accessToken: tokens.access_token, bearer: await signin(url, 'person@bench.example') };
}

const rate = async (opts) => {
  const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: DURATION });
  if (r.non2xx > 0 && !opts.expect) throw new Error(`${opts.url}: ${r.non2xx} answers not 2xx`);
  return r.requests.average;
};

async function ldapRate(port) {
  const count = { n: 0 };
  const until = Date.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = new Client({ url: `ldap://127.0.0.1:${port}` });
      await client.bind(`uid=admin,ou=people,${BASE}`, PASSWORD);
      while (Date.now() < until) {
        const { searchEntries } = await client.search(`ou=people,${BASE}`, { filter: '(uid=person)', attributes: ['memberOf'] });
        if ([searchEntries[0]?.memberOf].flat().length < CHAINS * DEPTH) throw new Error('memberOf lacks groups');
        count.n++;
      }
      await client.unbind();
    }),
  );
  return count.n / DURATION;
}

async function figures(s) {
  return {
    'groups claim/s': await rate({ url: `${s.url}/oidc/me`, headers: { authorization: `Bearer ${s.accessToken}` } }),
    'memberOf search/s': await ldapRate(s.ldapPort),
    'forward-auth/s': await rate({
      url: `${s.url}/auth/request`,
      headers: { authorization: `Bearer ${s.bearer}`, 'x-original-url': 'http://app.bench.test/', 'x-original-method': 'GET' },
    }),
  };
}

const stores = {};
/** Every server started, stopped at the end even when a setup step failed. */
const started = [];
try {
  for (const shape of ['flat', 'nested']) stores[shape] = await start(shape);
  const runs = { flat: [], nested: [] };
  for (let turn = 0; turn < TURNS; turn++) for (const shape of ['flat', 'nested']) runs[shape].push(await figures(stores[shape]));
  const best = (shape, key) => Math.max(...runs[shape].map((r) => r[key]));
  console.log(`${CHAINS * DEPTH} groups; best of ${TURNS} turns of ${DURATION} s, ${CONNECTIONS} connections; ${os.cpus().length} cores`);
  console.log(`${'figure'.padEnd(20)}${'flat'.padStart(10)}${'nested'.padStart(10)}${'nested/flat'.padStart(14)}`);
  for (const key of Object.keys(runs.flat[0])) {
    const [f, n] = [best('flat', key), best('nested', key)];
    console.log(`${key.padEnd(20)}${f.toFixed(0).padStart(10)}${n.toFixed(0).padStart(10)}${(n / f).toFixed(2).padStart(14)}`);
  }
} finally {
  for (const s of started) {
    await stop(s.server.child);
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
}
