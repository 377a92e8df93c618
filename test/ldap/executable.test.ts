// The packaged executable serves the directory when given --ldap-port (the LDAP code and its BER
// codecs load only then), binds and searches from OpenLDAP's tools, and stops with SIGTERM.
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
