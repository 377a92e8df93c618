// The OpenID Connect token endpoint beside a bare oidc-provider, in alternating turns (figures,
// never pass/fail): code exchange, rotating refresh and client-credentials grants per second, with
// the CPU each server spent per request on its main thread and on its other threads.
// Usage: node scripts/oidc-bench.mjs [--duration 4 --connections 16 --turns 2] [--pg postgres://…]
// npm run bench runs one turn of it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchServeArgs, spawnJsonLine, stop } from './process.mjs';
import { bareOidcTokenFigures, oidcCredentialsFigures, oidcTokenFigures } from './oidc-load.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PASSWORD = 'benchmark password 1234';

/** Gatehouse's token endpoint figures: one server on a temp store, `turns` turns, each followed by the bare provider's. */
export async function oidcFigures({ duration = 4, connections = 16, turns = 1, pg = null, profile = null } = {}) {
  const exe = path.join(root, 'dist', 'gatehouse');
  // --profile DIR: the bundle under this Node with --cpu-prof (a .cpuprofile in DIR when it stops).
  const command = profile ? [process.execPath, ['--cpu-prof', '--cpu-prof-dir', profile, path.join(root, 'dist', 'gatehouse.cjs')]] : [exe, []];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-oidc-bench-'));
  const store = pg ? ['--db', pg] : [];
  const server = spawnJsonLine(command[0], [...command[1], ...benchServeArgs(dataDir, 10, ...store)]);
  const results = [];
  try {
    const url = await server.ready;
    const account = { email: 'oidc@bench.example', name: 'Bench', password: PASSWORD, passwordConfirm: PASSWORD };
    const res = await fetch(`${url}/action/user_account/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attributes: account }),
    });
    if (!res.ok) throw new Error(`signup: ${res.status}`);
    const common = { exe, cliArgs: ['--data-dir', dataDir, ...store], env: process.env, url, connections, seconds: duration, pid: server.child.pid };
    // One uncounted short turn first: both servers' code warm (JIT) before anything is counted.
    await oidcTokenFigures({ ...common, email: account.email, password: PASSWORD, seconds: 1 });
    for (let t = 0; t < turns; t++) {
      const tokens = await oidcTokenFigures({ ...common, email: account.email, password: PASSWORD });
      const credentials = await oidcCredentialsFigures(common);
      const bare = await bareOidcTokenFigures({ connections, seconds: duration });
      results.push({ gatehouse: { ...tokens, credentials }, bare });
    }
  } finally {
    await stop(server.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

const cpu = (r) => (r.cpu ? `; CPU/request ${r.cpu.main.toFixed(0)} + ${r.cpu.others.toFixed(0)} µs` : '');

/** One line per figure and turn: Gatehouse's rate, the bare provider's, the ratio. */
export function printOidc(results) {
  for (const [i, { gatehouse, bare }] of results.entries()) {
    for (const [name, key] of [
      ['code exchange', 'exchange'],
      ['refresh (rotating)', 'refresh'],
      ['client credentials', 'credentials'],
    ]) {
      const g = gatehouse[key];
      const b = bare[key];
      console.log(
        `  turn ${i + 1} ${name.padEnd(20)} ${g.rps.toFixed(0).padStart(5)}/s (p99 ${g.p99.toFixed(0)} ms${cpu(g)})  bare ${b.rps.toFixed(0).padStart(5)}/s${cpu(b)}  = ${(g.rps / b.rps).toFixed(2)}`,
      );
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const results = await oidcFigures({
    duration: Number(arg('duration', 4)),
    connections: Number(arg('connections', 16)),
    turns: Number(arg('turns', 2)),
    pg: arg('pg', null),
    profile: arg('profile', null),
  });
  printOidc(results);
}
