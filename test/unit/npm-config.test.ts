// A newcomer's `npm ci` must build sqlite3 with no npm configuration of their own: the project's
// .npmrc names the Node headers, and they are where it says.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

const ROOT = path.join(__dirname, '..', '..');

t.test("the project's .npmrc sets nodedir, and the headers are there", async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-npm-home-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  // An empty HOME: no user .npmrc; npm_config_* variables of this shell removed too.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));
  const nodedir = execFileSync('npm', ['config', 'get', 'nodedir'], { cwd: ROOT, env: { ...env, HOME: home }, encoding: 'utf8' }).trim();
  t.equal(nodedir, '/usr');
  t.ok(fs.existsSync(path.join(nodedir, 'include', 'node', 'node.h')), `${nodedir}/include/node/node.h exists`);
});

t.test('bcrypt runs no install script (its prebuilt binaries ship in the package)', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
  t.equal(pkg.allowScripts.bcrypt, false);
  t.ok(fs.existsSync(path.join(ROOT, 'node_modules', 'bcrypt', 'prebuilds', `${process.platform}-${process.arch}`)));
});
