// Two packaged instances on one PostgreSQL database answer the same directory: a person made,
// a group change and a disabled account made from the shell show on both at the next request,
// with no restart.
import t from 'tap';
import { freePort } from '../helpers/browser';
import { ldapTool, ldif } from '../helpers/ldap';
import { onPostgres } from '../helpers/pg';

const PW = 'directory instance password 1';
const BASE = 'dc=example,dc=test';
const person = (u: string) => `uid=${u},ou=people,${BASE}`;

t.test('two instances, one directory', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const run = async (args: string[], extra: Record<string, string> = {}) => {
    const r = await pg.shell(args, extra);
    t.equal(r.code, 0, `${args.slice(0, 3).join(' ')}: ${r.stderr}`);
    return r;
  };
  await run(['bootstrap-admin', '--email', 'admin@example.test', '--password-env', 'PW'], { PW });
  const ports = [await freePort(), await freePort()];
  const flags = (port: number) => [
    '--bcrypt-cost',
    '4',
    '--public-url',
    'https://id.example.test',
    '--ldap-port',
    String(port),
    '--ldap-readers',
    'ldap-readers',
  ];
  await Promise.all(ports.map((p) => pg.serve(flags(p))));
  const urls = ports.map((p) => `ldap://127.0.0.1:${p}`);

  await run(['user', 'create', '--email', 'ann@example.test', '--password-env', 'PW'], { PW });
  await run(['user', 'create', '--email', 'bot@example.test', '--password-env', 'PW'], { PW });
  await run(['group', 'create', 'ldap-readers']);
  await run(['group', 'create', 'media']);
  await run(['group', 'add', 'ldap-readers', 'bot@example.test']);
  const app = JSON.parse((await run(['--json', 'user', 'app-password', 'add', 'bot@example.test', '--name', 'nextcloud'])).stdout);
  const as = (url: string, u: string, pw: string) => ['-x', '-H', url, '-D', person(u), '-w', pw];
  const membersOfMedia = async (url: string) => {
    const r = await ldapTool('ldapsearch', [...as(url, 'bot', app.secret), '-b', BASE, `(memberOf=cn=media,ou=groups,${BASE})`, 'uid']);
    t.equal(r.code, 0, r.err);
    return [...ldif(r.out).keys()];
  };

  for (const url of urls) {
    t.equal((await ldapTool('ldapwhoami', as(url, 'ann', PW))).out.trim(), `dn:${person('ann')}`, `${url}: ann binds`);
    t.same(await membersOfMedia(url), [], `${url}: media is empty`);
  }
  await run(['group', 'add', 'media', 'ann@example.test']);
  for (const url of urls) t.same(await membersOfMedia(url), [person('ann')], `${url}: ann is in media at once`);
  await run(['user', 'disable', 'ann@example.test']);
  for (const url of urls) {
    t.equal((await ldapTool('ldapwhoami', as(url, 'ann', PW))).code, 49, `${url}: disabled, refused`);
    t.same(await membersOfMedia(url), [], `${url}: and gone from the group`);
  }
  await run(['user', 'app-password', 'revoke', 'bot@example.test', app.app_password.id]);
  for (const url of urls) t.equal((await ldapTool('ldapwhoami', as(url, 'bot', app.secret))).code, 49, `${url}: a revoked app password, refused`);
});
