// The directory source's small parts, checked alone: an objectGUID's text and bytes (Active
// Directory's byte order, which no slapd here can produce), filter values escaped (RFC 4515), the
// URL rules (TLS or loopback), and what `source add` refuses before it connects.
import t from 'tap';
import { entryIdOf, filterValue, guidBytes, guidText, parseSourceUrl } from '../../src/sources/directory-client';
import { newSource, parseEvery } from '../../src/sources/operations';

t.test('objectGUID: the usual text, and back', async (t) => {
  // Microsoft's documented example: bytes 3f 2b ... are shown with the first three fields reversed.
  const bytes = Buffer.from('4f3b6cb4b1b3414a9a2bd6b1e6f3f0a1', 'hex');
  const text = guidText(bytes);
  t.equal(text, 'b46c3b4f-b3b1-4a41-9a2b-d6b1e6f3f0a1');
  t.same(guidBytes(text), bytes, 'round trip');
  t.equal(guidBytes('not a guid'), null);
  t.equal(guidBytes('b46c3b4f-b3b1-4a41-9a2b-d6b1e6f3f0a1)(uid=*'), null, 'nothing but hex reaches a filter');
  const entry = { dn: 'cn=x', values: new Map([['objectguid', [bytes]]]) };
  t.equal(entryIdOf({ id_attribute: 'objectGUID' }, entry), text);
  t.equal(entryIdOf({ id_attribute: 'objectGUID' }, { dn: 'cn=x', values: new Map([['objectguid', ['text, not bytes']]]) }), null);
});

t.test('entryUUID: kept as printable text, lower case; anything else is no id', async (t) => {
  const e = (v: string) => ({ dn: 'cn=x', values: new Map([['entryuuid', [v]]]) });
  t.equal(entryIdOf({ id_attribute: 'entryUUID' }, e('A1CB4F58-7F07-1041-9DC8-B186A7C6D4D7')), 'a1cb4f58-7f07-1041-9dc8-b186a7c6d4d7');
  t.equal(entryIdOf({ id_attribute: 'entryUUID' }, e('with space')), null);
  t.equal(entryIdOf({ id_attribute: 'entryUUID' }, e('x'.repeat(101))), null);
  t.equal(entryIdOf({ id_attribute: 'entryUUID' }, { dn: 'cn=x', values: new Map() }), null);
});

t.test('filter values are escaped', async (t) => {
  t.equal(filterValue('a*b(c)d\\e\0'), 'a\\2ab\\28c\\29d\\5ce\\00');
  t.equal(filterValue(Buffer.from([0, 255, 0x2a])), '\\00\\ff\\2a');
});

t.test('URLs: TLS, or plain only to this machine', async (t) => {
  t.equal(parseSourceUrl('ldaps://ldap.example.org', false), 'ldaps://ldap.example.org');
  t.equal(parseSourceUrl('ldap://ldap.example.org:389', true), 'ldap://ldap.example.org:389');
  t.equal(parseSourceUrl('ldap://127.0.0.1:3890/', false), 'ldap://127.0.0.1:3890');
  t.throws(() => parseSourceUrl('ldap://ldap.example.org', false), /in clear/);
  t.throws(() => parseSourceUrl('ldaps://ldap.example.org', true), /ldaps:\/\/ is TLS already/);
  t.throws(() => parseSourceUrl('ldaps://user:pw@ldap.example.org', false), /names only the directory/);
  t.throws(() => parseSourceUrl('ldaps://ldap.example.org/dc=example?uid', false), /names only the directory/);
  t.throws(() => parseSourceUrl('https://ldap.example.org', false), /ldaps/);
  t.throws(() => parseSourceUrl('not a url', false), /not a URL/);
});

t.test('what source add refuses before connecting', async (t) => {
  const base = { name: 'corp', url: 'ldaps://ldap.example.org', bindDn: 'cn=reader,dc=example,dc=org', bindPassword: 'pw', baseDn: 'dc=example,dc=org' };
  t.match(newSource(base), { uid_attribute: 'uid', id_attribute: 'entryUUID', user_filter: '(objectClass=inetOrgPerson)', every_seconds: null });
  t.match(newSource({ ...base, uidAttribute: 'sAMAccountName' }), { id_attribute: 'objectGUID', group_filter: '(objectClass=group)' });
  t.throws(() => newSource({ ...base, bindPassword: '' }), /anonymous bind/);
  t.throws(() => newSource({ ...base, userFilter: '(a=b)(c=d)' }), /LDAP filter/);
  t.throws(() => newSource({ ...base, userFilter: '(a=b' }), /LDAP filter/);
  t.throws(() => newSource({ ...base, userFilter: '(a=b\u0001)' }), /LDAP filter/, 'a control character');
  t.throws(() => newSource({ ...base, baseDn: 'example' }), /DN/);
  t.throws(() => newSource({ ...base, idAttribute: 'cn' }), /entryUUID or objectGUID/);
  t.throws(() => newSource({ ...base, uidAttribute: 'uid)(x' }), /attribute name/);
  t.throws(() => newSource({ ...base, caCertificate: 'not pem' }), /PEM/);
  t.equal(parseEvery('15m'), 900);
  t.equal(parseEvery('1d'), 86400);
  for (const bad of ['0m', '30s', '8d', '1w', '', '1.5h']) t.throws(() => parseEvery(bad), /period such as 15m/, bad);
});

t.test('DN keys: spaces around separators go, escaped characters and the spaces beside them stay', async (t) => {
  const { dnKey } = await import('../../src/sources/sync');
  t.equal(dnKey(' CN=Ann , OU=People,DC=example '), 'cn=ann,ou=people,dc=example');
  t.not(dnKey('cn=R&D\\, Europe,dc=x'), dnKey('cn=R&D\\,Europe,dc=x'), 'an escaped comma is part of the value');
  t.equal(dnKey('cn=R&D\\, Europe , dc=x'), 'cn=r&d\\, europe,dc=x');
  t.equal(dnKey('cn=a\\ ,dc=x'), 'cn=a\\ ,dc=x', 'an escaped trailing space is kept');
  t.equal(dnKey('cn=a+sn=b,dc=x'), dnKey('cn=a + sn=b, dc=x'));
});
