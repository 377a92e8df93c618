// Signin cost beside another build: the same load on two executables, one after the other, each on
// a fresh store. bcrypt cost 4 by default, so the figures show what a signin costs besides the
// hash (counters, the familiar-place check and record, the session): at cost 11 the hash hides it.
// Usage: node scripts/signin-compare.mjs <baseline executable> [candidate, default dist/gatehouse]
//        [--duration 8] [--connections 8] [--cost 4]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { spawnJsonLine, stop } from './process.mjs';

const flag = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const [baseline, candidate = 'dist/gatehouse'] = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
if (!baseline) throw new Error('usage: node scripts/signin-compare.mjs <baseline executable> [candidate]');
const duration = flag('duration', 8);
const connections = flag('connections', 8);
const cost = flag('cost', 4);
const PASSWORD = 'correct horse battery staple';

async function measure(exe) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-signin-'));
  const { child, ready } = spawnJsonLine(path.resolve(exe), ['serve', '--data-dir', dir, '--port', '0', '--bcrypt-cost', String(cost), '--no-rate-limits']);
  try {
    const url = await ready;
    await fetch(`${url}/action/user_account/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attributes: { email: 'bench@example.com', name: 'Bench', password: PASSWORD, passwordConfirm: PASSWORD } }),
    });
    const run = (password) =>
      autocannon({
        url: `${url}/action/user_account/signin`,
        method: 'POST',
        connections,
        duration,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attributes: { email: 'bench@example.com', password } }),
      });
    const ok = await run(PASSWORD);
    const wrong = await run('not the password at all');
    return { ok: ok.requests.average, okP99: ok.latency.p99, wrong: wrong.requests.average, wrongP99: wrong.latency.p99, errors: ok.non2xx };
  } finally {
    await stop(child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const [name, exe] of [
  ['baseline', baseline],
  ['candidate', candidate],
]) {
  const r = await measure(exe);
  rows.push([name, r.ok.toFixed(0), r.okP99, r.wrong.toFixed(0), r.wrongP99, r.errors]);
}
console.log(`signin at bcrypt cost ${cost}, ${connections} connections, ${duration} s each`);
console.log(['build', 'ok req/s', 'ok p99 ms', 'wrong req/s', 'wrong p99 ms', 'ok non-2xx'].join('\t'));
for (const r of rows) console.log(r.join('\t'));
