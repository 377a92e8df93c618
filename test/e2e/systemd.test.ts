// The systemd unit in scripts/: systemd's own checker accepts it without a warning, its
// hardening rates "OK" in systemd's offline security review, and the environment it gives the
// executable starts a server whose store and addon cache land in the folders the unit names.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { exeFolder, serveExe } from '../helpers/exe';

const UNIT = path.resolve(__dirname, '..', '..', 'scripts', 'gatehouse.service');

t.test('the systemd unit verifies, is hardened, and its environment serves', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const text = fs.readFileSync(UNIT, 'utf8');
  const unit = path.join(dir, 'gatehouse.service');
  // verify checks that ExecStart's program exists: point it at the packaged executable.
  fs.writeFileSync(unit, text.replace(/^ExecStart=\/usr\/local\/bin\/gatehouse/m, `ExecStart=${exe}`));

  const verify = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  t.equal(verify.status, 0, verify.stderr);
  t.equal(verify.stderr.trim(), '', 'no warning (unknown keys are only warnings)');

  const security = spawnSync('systemd-analyze', ['security', '--offline=true', unit], { encoding: 'utf8' });
  const level = /Overall exposure level for gatehouse\.service: ([\d.]+) (\w+)/.exec(security.stdout);
  t.ok(level, security.stdout + security.stderr);
  t.equal(level?.[2], 'OK', `exposure ${level?.[1]}: systemd rates it OK`);

  for (const line of ['DynamicUser=yes', 'StateDirectory=gatehouse', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'UMask=0077', 'CapabilityBoundingSet=']) {
    t.ok(text.split('\n').includes(line), line);
  }

  // The unit's Environment= lines, with %S (state) and %C (cache) made temporary folders.
  const state = path.join(dir, 'state');
  const cache = path.join(dir, 'cache');
  fs.mkdirSync(path.join(state, 'gatehouse'), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(cache, 'gatehouse'), { recursive: true, mode: 0o700 });
  const unitEnv = Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.startsWith('Environment='))
      .map((l) => l.slice('Environment='.length).replace('%S', state).replace('%C', cache).split('='))
      .map(([k, ...v]) => [k, v.join('=')]),
  );
  t.equal(unitEnv.GATEHOUSE_DATA_DIR, path.join(state, 'gatehouse'));
  const server = await serveExe(t, exe, ['--bcrypt-cost', '4'], { env: { ...env, ...unitEnv, GATEHOUSE_PORT: '0' }, cwd: dir });
  t.equal((await fetch(`${server.url}/health/ready`)).status, 200);
  t.ok(fs.existsSync(path.join(state, 'gatehouse', 'gatehouse.sqlite')), 'the store is in the state directory');
  // The first account's password is the first hash: bcrypt's addon is written out then (the store needs none).
  const signup = await fetch(`${server.url}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'unit@example.com', name: 'Unit', password: 'a long password 12', passwordConfirm: 'a long password 12' } }),
  });
  t.equal(signup.status, 200);
  t.ok(fs.readdirSync(path.join(cache, 'gatehouse')).length > 0, 'the native addons are cached in the cache directory');
  t.equal(await server.stop(), 0, 'SIGTERM (KillSignal) stops it cleanly');
});
