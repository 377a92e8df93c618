// Apache httpd's mod_authnz_ldap (Debian's apache2) guarding a folder with `Require ldap-group`,
// configured with docs/ldap.md's block as written: a member gets in, someone else, a wrong
// password and a disabled account do not, and a group change shows once Apache's cache ends.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli';
import { freePort } from '../helpers/browser';
import { startApache } from '../helpers/proxies';
import { PASSWORD } from '../helpers/server';
import { ldapServer } from '../helpers/ldap';

const DOC = path.join(__dirname, '..', '..', 'docs', 'ldap.md');

function apacheBlock(): string {
  const m = /<!-- apache:[^\n]*-->\n```apache\n([\s\S]*?)\n```/.exec(fs.readFileSync(DOC, 'utf8'));
  if (!m) throw new Error('docs/ldap.md has no apache block');
  return m[1];
}

t.test("Apache's Require ldap-group lets in the members of a Gatehouse group", async (t) => {
  const { s, port, make } = await ldapServer(t);
  for (const e of ['bot@example.com', 'ann@example.com', 'cy@example.com']) await make(e);
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'create', 'media']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  await cli(s.dataDir, ['group', 'add', 'media', 'ann@example.com']);
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'bot@example.com', '--name', 'apache']);

  // The doc's block with this test's port and the bot's app password; Apache's cache held to
  // one second so a change is seen by the next request after it.
  const block = apacheBlock()
    .replace('127.0.0.1:3389', `127.0.0.1:${port}`)
    .replace(`"the bot's app password"`, `"${app.json.secret}"`)
    .replace(/^LDAPCacheTTL \d+$/m, 'LDAPCacheTTL 1\nLDAPOpCacheTTL 1');
  const web = await freePort();
  const dir = await startApache(t, web, ['ldap', 'authnz_ldap'], () => block);
  fs.mkdirSync(path.join(dir, 'www', 'media'), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'www', 'media', 'index.html'), 'the media folder\n', { mode: 0o644 });

  const get = async (user?: string, password = PASSWORD) => {
    const headers: Record<string, string> = {};
    if (user) headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const r = await fetch(`http://127.0.0.1:${web}/media/index.html`, { headers });
    return { status: r.status, text: await r.text() };
  };
  t.equal((await get()).status, 401, 'no credentials: 401');
  const ann = await get('ann');
  t.equal(ann.status, 200, 'a member of media gets in');
  t.equal(ann.text, 'the media folder\n');
  t.equal((await get('ANN')).status, 200, 'the username in any case');
  t.equal((await get('ann', 'a wrong password')).status, 401, 'a wrong password: 401');
  t.equal((await get('cy')).status, 401, 'not in the group: refused');
  t.equal((await get('nobody')).status, 401, 'an unknown name: refused');

  // Changes in Gatehouse, no restart of anything.
  await cli(s.dataDir, ['group', 'add', 'media', 'cy@example.com']);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal((await get('cy')).status, 200, 'added to the group: in');
  await cli(s.dataDir, ['group', 'remove', 'media', 'cy@example.com']);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal((await get('cy')).status, 401, 'removed from the group: out');
  await cli(s.dataDir, ['user', 'disable', 'ann@example.com']);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal((await get('ann')).status, 401, 'disabled: out');
});
