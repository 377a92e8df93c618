// The README's quick tour, pasted as a newcomer would: its shell block runs against the packaged
// executable (on a free port instead of 6336) and every step answers as the README says.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/browser';
import { EXE, serveExe } from '../helpers/exe';
import { tempDir } from '../helpers/server';

t.test('the quick tour works as written', async (t) => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const block = /## Quick tour[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1];
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'dist'));
  fs.symlinkSync(EXE, path.join(dir, 'dist', 'gatehouse'));
  const port = await freePort();
  const env = { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8' };
  const server = await serveExe(t, path.join(dir, 'dist', 'gatehouse'), ['--port', String(port), '--bcrypt-cost', '4'], { env, cwd: dir });
  const script = `set -euo pipefail\n${block.replaceAll('6336', String(port))}`;
  const out = execFileSync('bash', ['-c', script], { cwd: dir, env, encoding: 'utf8' });
  t.match(out, /admin@example\.com: created the administrator/, 'step 1 prints what the README shows');
  t.match(out, /permission:\s+2097025 -> 2097057/, 'step 2 too');
  t.match(out, /"account\.created"/, 'step 3: the signup answers');
  t.match(out, /"email":"ada@example\.com"[\s\S]*"administrator":false/, 'step 4: /api/me answers with the account');
  t.equal(await server.stop(), 0);
});
