// docs/providers.md's GitHub and OAuth 2.0 commands, run as written by the packaged executable
// (each `#   ` line after a command found in what it printed), and docs/configuration.md's
// providers block applied by it beside them. The sign-in itself, through a stand-in of GitHub,
// is test/upstream/github.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { docSteps, exeFolder, runExe } from '../helpers/exe';

const root = path.join(__dirname, '..', '..');
const providersDoc = fs.readFileSync(path.join(root, 'docs', 'providers.md'), 'utf8');
const configDoc = fs.readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8');

t.test("docs/providers.md's GitHub and OAuth 2.0 commands, and docs/configuration.md's providers, work as written", async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const shellEnv = { ...env, PATH: `${dir}:/usr/bin:/bin` };
  t.equal(
    (await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], { env, cwd: dir, stdin: 'a long admin password' })).code,
    0,
  );
  for (const marker of ['github-commands', 'oauth2-commands']) {
    const steps = docSteps(providersDoc, marker);
    t.ok(steps.length >= 2, `${marker} has its steps`);
    for (const { line, said } of steps) {
      const r = await runExe('/bin/bash', ['-c', line], { env: shellEnv, cwd: dir });
      t.equal(r.code, 0, `${line}: exit code (${r.stderr.trim()})`);
      const printed = (r.stdout + r.stderr).replace(/ +/g, ' ');
      for (const s of said) t.ok(printed.includes(s.replace(/ +/g, ' ')), `${line}: prints ${s}\n${r.stdout}${r.stderr}`);
    }
  }
  const run = (...args: string[]) => runExe(exe, args, { env: { ...env, GITLAB_CLIENT_SECRET: 'gitlab-secret' }, cwd: dir });
  const github = JSON.parse((await run('--json', 'provider', 'show', 'github')).stdout);
  t.match(github, { kind: 'github', issuer: 'https://github.com', settings: { api_url: 'https://api.github.com', allowed_org: 'my-org' } });
  const forge = JSON.parse((await run('--json', 'provider', 'show', 'forge')).stdout);
  t.match(forge, { kind: 'oauth2', scopes: ['profile'], settings: { userinfo_url: 'https://forge.example.com/api/user', name_field: 'display_name' } });

  // The configuration file's providers block: the GitHub provider made above is taken over, with the file's one team.
  const yaml = /### Upstream sign-in providers\n\n```yaml\n([\s\S]*?)\n```/.exec(configDoc)![1];
  // A fragment of a file: the version line every file starts with, then the block.
  fs.writeFileSync(path.join(dir, 'providers.yaml'), `version: 1\n${yaml}\n`);
  const applied = await run('config', 'apply', 'providers.yaml');
  t.equal(applied.code, 0, applied.stdout + applied.stderr);
  t.match(applied.stdout, /^\+ provider gitlab$/m);
  t.match(applied.stdout, /^~ provider github: /m);
  const taken = JSON.parse((await run('--json', 'provider', 'show', 'github')).stdout);
  t.same(taken.settings.team_groups, [{ org: 'my-org', team: 'engineering', group: 'developers' }]);
  const again = await run('config', 'plan', 'providers.yaml');
  t.equal(again.code, 0, 'nothing left to change');
  // The export writes each kind's own keys, and plans to nothing on the store it came from.
  t.equal((await run('config', 'export', '--out', 'exported.yaml')).code, 0);
  const written = fs.readFileSync(path.join(dir, 'exported.yaml'), 'utf8');
  t.match(written, /kind: github/);
  t.match(written, /kind: oauth2/);
  t.match(written, /userinfo_url: https:\/\/forge\.example\.com\/api\/user/);
  const replanned = await run('config', 'plan', 'exported.yaml');
  t.equal(replanned.stdout.split('\n')[0], 'nothing to change', replanned.stdout + replanned.stderr);
});
