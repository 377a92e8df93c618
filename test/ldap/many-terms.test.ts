// A reader's filter of thousands of memberOf terms over a person in a hundred groups through
// nesting (an outside review held the whole server 26 s with one): answered, and right. The
// entry's values are normalised once per search, each term's once; no timing is asserted here
// (scripts/ measure speed), only that the answer is the right one.
import t from 'tap';
import { Client } from 'ldapts';
import { cli } from '../helpers/cli';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, person } from '../helpers/ldap';

t.test('4,000 in-chain and plain memberOf terms in one filter', async (t) => {
  const { s, url, make } = await ldapServer(t);
  for (const e of ['bot@example.com', 'ann@example.com', 'bo@example.com']) await make(e);
  t.equal((await cli(s.dataDir, ['group', 'create', 'ldap-readers'])).code, 0);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  // Ann is in the bottom of a chain of 10; the top is g0.
  for (let i = 0; i < 10; i++) t.equal((await cli(s.dataDir, ['group', 'create', `g${i}`])).code, 0);
  for (let i = 0; i < 9; i++) t.equal((await cli(s.dataDir, ['group', 'add-group', `g${i}`, `g${i + 1}`])).code, 0);
  await cli(s.dataDir, ['group', 'add', 'g9', 'ann@example.com']);

  const client = new Client({ url });
  t.teardown(() => client.unbind());
  await client.bind(person('bot'), PASSWORD);
  const terms = Array.from({ length: 4000 }, (_, i) =>
    i % 2 === 0 ? `(memberOf:1.2.840.113556.1.4.1941:=cn=nosuch${i},ou=groups,${BASE})` : `(memberOf=cn=other${i},ou=groups,${BASE})`,
  );
  const hit = `(memberOf:1.2.840.113556.1.4.1941:=CN=g0,OU=groups,${BASE.toUpperCase()})`;
  const { searchEntries } = await client.search(`ou=people,${BASE}`, { filter: `(|${terms.join('')}${hit})`, attributes: ['uid'] });
  t.same(
    searchEntries.map((e) => e.uid),
    ['ann'],
    'only ann, through nine nestings, matched in any case',
  );
  const none = await client.search(`ou=people,${BASE}`, { filter: `(|${terms.join('')})`, attributes: ['uid'] });
  t.same(none.searchEntries, [], 'no term names a group anyone is in');
});
