// A sync whose write of one entry fails in the store (here: a DN longer than source_entry.dn's
// 1000 characters, which PostgreSQL refuses and SQLite keeps) skips that entry alone: the people
// before and after it are written, and what the sync reports (and `source show` keeps) is what
// the store holds, on both stores.
import t from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir } from '../helpers/server';
import { ADMIN_DN, ADMIN_PASSWORD, personLdif, startSlapd, SUFFIX } from '../helpers/slapd';

t.test('an entry the store cannot hold is skipped alone; the report is what was written', async (t) => {
  const slapd = await startSlapd(t);
  // Six nested units of 180 characters: a person's DN of about 1,150 characters.
  let base = SUFFIX;
  const units: string[] = [];
  for (let i = 0; i < 6; i++) {
    const ou = `${i}`.repeat(180);
    await slapd.add(`dn: ou=${ou},${base}\nobjectClass: organizationalUnit\nou: ${ou}\n\n`);
    base = `ou=${ou},${base}`;
    units.unshift(ou);
  }
  await slapd.add(personLdif('alice') + personLdif('zed', { ou: units.join(',ou=') }) + personLdif('bob') + personLdif('carol'));
  const dir = tempDir(t);
  const s = await startTestServer(t, {}, dir);
  const added = await cli(
    dir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(added.code, 0, added.err);
  const r = await cli(dir, ['--json', 'source', 'sync', 'corp']);
  t.equal(r.code, 0, r.err);
  const written = (await s.db('user_account').orderBy('email').pluck('email')) as string[];
  const entries = Number((await s.db('source_entry').count({ n: '*' }).first())!.n);
  t.ok(
    ['alice', 'bob', 'carol'].every((u) => written.includes(`${u}@example.org`)),
    `alice, bob and carol are written whatever becomes of zed: ${JSON.stringify(written)}`,
  );
  t.equal(
    r.json.people.created,
    written.length,
    `the report's created is what the store holds: ${JSON.stringify(r.json.people)}, ${JSON.stringify(r.json.skipped)}`,
  );
  t.equal(entries, written.length, 'each account written has its source entry (none without one)');
  const shown = await cli(dir, ['--json', 'source', 'show', 'corp']);
  t.equal(shown.json.people, r.json.people.created, '`source show` counts what the sync said it made');
});
