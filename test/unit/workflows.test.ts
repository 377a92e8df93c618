// Every GitHub Actions workflow in .github/workflows is valid by the workflow schema, as checked by
// action-validator (the @action-validator/cli devDependency, WebAssembly, no install script): a
// typo in the release workflow would otherwise surface only when a tag is pushed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/server';

const ROOT = path.join(__dirname, '..', '..');
const WORKFLOWS = path.join(ROOT, '.github', 'workflows');
const VALIDATOR = path.join(ROOT, 'node_modules', '@action-validator', 'cli', 'cli.mjs');

const validate = (file: string) => spawnSync(process.execPath, [VALIDATOR, file], { cwd: ROOT, encoding: 'utf8' });

t.test('every workflow passes action-validator', async (t) => {
  const files = fs.readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f));
  t.ok(files.includes('release.yml'), 'the release workflow is there');
  for (const f of files) {
    const r = validate(path.join(WORKFLOWS, f));
    t.equal(r.status, 0, `${f}: ${r.stdout}${r.stderr}`);
  }
});

t.test('the validator refuses a broken workflow (it does check)', async (t) => {
  const bad = path.join(tempDir(t), 'bad.yml');
  fs.writeFileSync(bad, 'name: bad\non: push\njobs:\n  a:\n    runs-onn: ubuntu-latest\n    steps:\n      - run: echo hi\n');
  t.not(validate(bad).status, 0);
});

t.test('the release workflow publishes what the docs say, signed with the secret key', async (t) => {
  const yml = fs.readFileSync(path.join(WORKFLOWS, 'release.yml'), 'utf8');
  t.match(yml, /tags: \['v\*'\]/, 'on a tag v*');
  for (const step of ['npm ci', 'npm run lint', 'bash .ci/run', 'npm run release -- --sign-key']) t.ok(yml.includes(step), `runs ${step}`);
  t.match(yml, /secrets\.GATEHOUSE_RELEASE_SIGNING_KEY/, 'the key comes from the secret');
  t.match(yml, /ssh-keygen -Y verify -f \.\.\/scripts\/release\/allowed_signers -I releases@gatehouse -n gatehouse-release/, 'checked with the committed key');
  for (const file of ['tar.gz', 'cdx.json', 'Dockerfile', 'SHA256SUMS', 'SHA256SUMS.sig']) t.ok(yml.includes(file), `publishes ${file}`);
  t.match(yml, /docker\/build-push-action/, 'builds and pushes the image');
  t.match(yml, /ghcr\.io\/\$\{GITHUB_REPOSITORY_OWNER,,\}\/gatehouse/, 'to ghcr.io/<owner>/gatehouse');
});
