// Forward authentication matches rules on one reading of a path (issue 46, item 1): RFC 3986
// section 6's normalization, with what apps read in different ways refused.
import t from 'tap';
import { ambiguousUnder, normalPath, parsePrefix } from '../../src/apps/rules';

t.test('normalPath: decodes unreserved characters, merges //, resolves dot segments', async (t) => {
  const cases: Array<[string, string]> = [
    ['/', '/'],
    ['/admin', '/admin'],
    ['/admin/', '/admin/'],
    ['/%61dmin/secret.txt', '/admin/secret.txt'],
    ['/%7Euser/%2d%2E', '/~user/-.'],
    ['//admin///x', '/admin/x'],
    ['/x/../admin', '/admin'],
    ['/x/%2e%2e/admin', '/admin'],
    ['/a/./b/.', '/a/b/'],
    ['/a/b/..', '/a/'],
    ['/a%20b/caf%c3%a9', '/a%20b/caf%C3%A9'],
    ["/a:b@c!$&'()*+,=", "/a:b@c!$&'()*+,="],
  ];
  for (const [raw, want] of cases) t.same(normalPath(raw), { path: want }, raw);
});

t.test('normalPath: refuses what apps read in more than one way', async (t) => {
  for (const raw of [
    'admin',
    '/a%2fb',
    '/a%2Fb',
    '/a%5cb',
    '/a\\b',
    '/a%00',
    '/a%0a',
    '/a%252f',
    '/a;x=1',
    '/a%zz',
    '/a%4',
    '/..',
    '/a/../..',
    '/a b',
    '/a\tb',
  ]) {
    const r = normalPath(raw);
    t.ok('problem' in r, `${JSON.stringify(raw)} refused`);
  }
});

t.test('a rule prefix is stored in its normal form; a lenient reading is ambiguous', async (t) => {
  t.equal(parsePrefix('/admin/', '--path'), '/admin');
  t.equal(parsePrefix('/caf%C3%A9', '--path'), '/caf%C3%A9', 'other characters percent-encoded');
  for (const bad of ['/%61dmin', '//admin', '/a/../b', '/a;b', '/a%2fb', 'admin', '/a?b', '/<script>', '/a"b', '/café', '/a b'])
    t.throws(() => parsePrefix(bad, '--path'), { code: 'invalid_input' }, bad);
  t.equal(ambiguousUnder('/Admin/x', ['/admin']), '/admin');
  t.equal(ambiguousUnder('/admin./x', ['/admin']), '/admin');
  t.equal(ambiguousUnder('/admin%20/x', ['/admin']), '/admin');
  t.equal(ambiguousUnder('/admin/x', ['/admin']), null, 'the exact path is not ambiguous');
  t.equal(ambiguousUnder('/Administrator', ['/admin']), null, 'a longer segment is not under it');
  t.equal(ambiguousUnder('/anything', ['/']), null);
  // Found by the outsider review: what a Unicode-folding app or a Windows file system reads as the rule's path.
  const ambiguous: Array<[string, string]> = [
    ['/adm%C4%B1n', '/admin'], // dotless ı
    ['/%E2%80%8Cadmin', '/admin'], // zero-width non-joiner
    ['/admin%E2%80%8C/x', '/admin'],
    ['/admin::$DATA', '/admin'], // an NTFS stream
    ['/admin:stream:$DATA/x', '/admin'],
    ['/ADMIN~1', '/admin'], // a Windows short name
    ['/%EF%BD%81dmin', '/admin'], // fullwidth a
    ['/share/%C5%BFecret/x', '/share/secret'], // long s
    ['/share/secret%E2%80%8C', '/share/secret'],
    ['/share/%EF%BB%BFsecret', '/share/secret'], // byte-order mark
    ['/share/SECRE~1', '/share/secret'],
    ['/share/%EF%BD%93ecret/x', '/share/secret'],
    ['/pub/%E2%84%AAit', '/pub/kit'], // Kelvin sign
  ];
  for (const [path, rule] of ambiguous) t.equal(ambiguousUnder(path, [rule]), rule, `${path} is ambiguous beside ${rule}`);
  for (const path of ['/admins', '/share/secrets', '/share/secret-ish', '/pub/kite', '/caf%C3%A9'])
    t.equal(ambiguousUnder(path, ['/admin', '/share/secret', '/pub/kit']), null, `${path} is not`);
});
