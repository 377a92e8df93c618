// A Kubernetes-style start with the packaged executable: the configuration file from a mounted
// ConfigMap (GATEHOUSE_CONFIG), the client's secret from a mounted Secret under /run/secrets; the
// app then gets tokens with that secret. A link under /run/secrets to a file elsewhere is refused.
// (The test writes its own uniquely named entries under /run/secrets and removes them.)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { exeFolder, runExe, serveExe } from '../helpers/exe';

t.test('serve with GATEHOUSE_CONFIG and a secret under /run/secrets: the client works at the token endpoint', async (t) => {
  try {
    fs.mkdirSync('/run/secrets', { recursive: true });
    fs.accessSync('/run/secrets', fs.constants.W_OK);
  } catch {
    t.fail('/run/secrets cannot be written here: this test needs to stand for a mounted Secret');
    return;
  }
  const name = `gatehouse-test-${randomBytes(6).toString('hex')}`;
  const secretFile = path.join('/run/secrets', name);
  const link = path.join('/run/secrets', `${name}-link`);
  t.teardown(() => {
    fs.rmSync(secretFile, { force: true });
    fs.rmSync(link, { force: true });
  });
  const secret = randomBytes(32).toString('base64url');
  fs.writeFileSync(secretFile, `${secret}\n`, { mode: 0o400 });

  const { dir, exe, env } = exeFolder(t);
  const configDir = path.join(dir, 'config'); // where a ConfigMap is mounted
  fs.mkdirSync(configDir);
  const file = path.join(configDir, 'gatehouse.yaml');
  fs.writeFileSync(
    file,
    `version: 1
oidc_clients:
  - client_id: reports
    name: Reports job
    secret: {file: ${secretFile}}
    credentials: true
    audience: https://api.example.test
`,
  );
  const server = await serveExe(t, exe, ['--data-dir', path.join(dir, 'data')], { env: { ...env, GATEHOUSE_CONFIG: file }, cwd: dir });
  t.match(server.output(), /"event":"config_applied".*"created":1/);
  t.notOk(server.output().includes(secret), 'the secret is in no log line');
  const token = (auth: string) =>
    fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(auth).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
  const granted = await token(`reports:${secret}`);
  t.equal(granted.status, 200, 'the secret from /run/secrets opens the token endpoint');
  t.type(((await granted.json()) as { access_token?: string }).access_token, 'string');
  t.equal((await token('reports:not-the-secret-at-all-not-the-secret')).status, 401);
  t.equal(await server.stop(), 0);

  // A link under /run/secrets to a file elsewhere is not a secret the file may read.
  fs.symlinkSync('/etc/hostname', link);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(secretFile, link));
  const refused = await runExe(exe, ['--data-dir', path.join(dir, 'data'), 'config', 'plan', file], { env, cwd: dir });
  t.equal(refused.code, 1);
  t.match(refused.stderr, /gatehouse\.yaml:5:13: the secret file .* is outside the configuration file's folder, \/run\/secrets and \$CREDENTIALS_DIRECTORY/);
});
