// A newcomer's `npm ci` runs no package's install script and needs no npm configuration of their
// own; nothing is compiled, on install or build (the store's SQLite is Node's own). No npm command
// warns about the project's configuration (issue 34: "Unknown project config nodedir").
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';

const ROOT = path.join(__dirname, '..', '..');

/** This shell's environment without npm's own variables, and an empty HOME: no user .npmrc. */
function emptyNpmEnv(t: Test): NodeJS.ProcessEnv {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-npm-home-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, HOME: home };
}

t.test("the project's .npmrc holds only settings npm knows: npm runs no install script, and warns of nothing", async (t) => {
  const env = emptyNpmEnv(t);
  t.equal(execFileSync('npm', ['config', 'get', 'ignore-scripts'], { cwd: ROOT, env, encoding: 'utf8' }).trim(), 'true');
  const r = spawnSync('npm', ['run', 'typecheck', '--', '--version'], { cwd: ROOT, env, encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stderr, /warn/i, 'no npm warning on a project command');
  t.notMatch(fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8'), /^\s*nodedir/m, 'no nodedir (not an npm setting)');
});

t.test('nothing to compile: no sqlite3 package, and bcrypt needs no script', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    allowScripts: Record<string, boolean>;
    dependencies: Record<string, string>;
  };
  t.notOk('sqlite3' in pkg.dependencies, "the store's SQLite is node:sqlite, not the sqlite3 package");
  t.notOk(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8').includes('"node_modules/sqlite3"'), 'nor in the lockfile');
  t.equal(pkg.allowScripts.bcrypt, false);
  t.ok(fs.existsSync(path.join(ROOT, 'node_modules', 'bcrypt', 'prebuilds', `${process.platform}-${process.arch}`)));
});
