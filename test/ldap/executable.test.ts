// The packaged executable serves the directory when given --ldap-port (the LDAP code and its BER
// codecs load only then), binds and searches from OpenLDAP's tools, and stops with SIGTERM.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/browser';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { ldapTool } from '../helpers/ldap';

t.test('serve --ldap-port: the directory of the packaged server', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const data = ['--data-dir', path.join(dir, 'data')];
  const PW = 'a long admin password';
  t.equal((await runExe(exe, [...data, 'bootstrap-admin', '--email', 'root@example.org', '--password-env', 'PW'], { env: { ...env, PW }, cwd: dir })).code, 0);
  const port = await freePort();
  const server = await serveExe(t, exe, [...data, '--bcrypt-cost', '4', '--public-url', 'https://auth.example.org', '--ldap-port', String(port)], {
    env,
    cwd: dir,
  });
  const listening = JSON.parse(
    server
      .output()
      .split('\n')
      .find((l) => l.includes('"ldap_listening"'))!,
  );
  t.match(listening, { port, ldaps_port: null, base_dn: 'dc=example,dc=org' }, 'the base DN from the public URL');
  const url = `ldap://127.0.0.1:${port}`;
  const who = await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', 'uid=root,ou=people,dc=example,dc=org', '-w', PW]);
  t.equal(who.out.trim(), 'dn:uid=root,ou=people,dc=example,dc=org', who.err);
  const found = await ldapTool('ldapsearch', [
    '-x',
    '-H',
    url,
    '-D',
    'uid=root,ou=people,dc=example,dc=org',
    '-w',
    PW,
    '-b',
    'dc=example,dc=org',
    '(mail=root@example.org)',
    'uid',
  ]);
  t.match(found.out, /uid: root/);
  t.equal(await server.stop(), 0, 'stops cleanly with the directory open');
});

t.test('without --ldap-port, nothing listens for LDAP', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const server = await serveExe(t, exe, ['--data-dir', path.join(dir, 'data')], { env, cwd: dir });
  t.notMatch(server.output(), /ldap_listening/);
  t.equal(await server.stop(), 0);
});

t.test("issue 46, item 17: docs/ldap.md's one-machine lines work as written on the README's default server", async (t) => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'ldap.md'), 'utf8');
  const block = /<!-- ldap-local:[^\n]*-->\n```sh\n([\s\S]*?)\n```/.exec(doc)![1].split('\n');
  const { dir, exe, env } = exeFolder(t);
  const port = await freePort();
  const lines = block.filter((l) => !l.startsWith('#')).map((l) => l.replaceAll('3890', String(port)));
  t.equal(lines[0], `gatehouse serve --ldap-port ${port}`);
  // The README's server: no --public-url, so http://localhost:<port> and the base dc=localhost.
  const server = await serveExe(t, exe, ['--ldap-port', String(port)], { env, cwd: dir });
  const said = block
    .find((l) => l.startsWith('#   The LDAP directory'))!
    .replace(/^#\s+/, '')
    .replace('3890', String(port));
  t.ok(server.output().includes(said), `the server says: ${said}`);
  const bootstrap = /^printf '([^']*)' \| gatehouse (.*)$/.exec(lines[1])!;
  t.equal((await runExe(exe, bootstrap[2].split(' '), { env, cwd: dir, stdin: bootstrap[1] })).code, 0);
  // Each client line, its arguments as the shell splits them (single quotes kept together).
  const words = (line: string) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
  const [who, search] = [words(lines[2]), words(lines[3])];
  const whoami = await ldapTool(who[0], who.slice(1));
  t.equal(whoami.out.trim(), block.find((l) => l.startsWith('#   dn:'))!.replace(/^#\s+/, ''), whoami.err);
  const found = await ldapTool(search[0], search.slice(1));
  t.equal(found.code, 0, found.err);
  t.match(found.out, /uid: admin\nmail: admin@example\.com\nmemberOf: cn=administrators,ou=groups,dc=localhost/);
  t.equal(await server.stop(), 0);
});
