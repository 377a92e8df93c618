// Property tests: the permission encoder, email normalization and the password rules.
import fc from 'fast-check';
import t from 'tap';
import { decode, encode, MAX_PERMISSION, OPERATIONS, parsePermission, SCOPES } from '../../src/permission/bits';
import { identityKey, normalizeEmail, validatePassword } from '../../src/accounts/validate';
import { isAppError } from '../../src/errors';

const code = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return isAppError(err) ? err.code : 'crash';
  }
};

t.test('permission: decode then encode is the identity on 0…2097151; parse refuses everything else', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: MAX_PERMISSION }), (v) => {
      const d = decode(v);
      const grants = Object.fromEntries(SCOPES.map((s) => [s, OPERATIONS.filter((op) => d[s][op])]));
      return encode(grants) === v && parsePermission(v) === v && parsePermission(String(v)) === v;
    }),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ max: -1 }),
        fc.integer({ min: MAX_PERMISSION + 1 }),
        fc.double({ noInteger: true }),
        fc.string().filter((s) => !/^\d{1,7}$/.test(s) || Number(s) > MAX_PERMISSION),
        fc.constant(null),
        fc.boolean(),
        fc.object(),
      ),
      (v) => code(() => parsePermission(v)) === 'invalid_input',
    ),
    { numRuns: 3000 },
  );
  t.pass('5000 + 3000 cases');
});

t.test('email: normalization is idempotent, never crashes, and keys ignore case and compatibility forms', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (raw) => {
      const result = code(() => normalizeEmail(raw));
      if (result === null) {
        const n = normalizeEmail(raw);
        const again = normalizeEmail(n.email);
        return again.email === n.email && again.key === n.key && n.email.length <= 254 && !/\s/u.test(n.email) && identityKey(n.key) === n.key;
      }
      return result === 'invalid_input';
    }),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.emailAddress(), (email) => {
      const a = normalizeEmail(email);
      return normalizeEmail(email.toUpperCase()).key === a.key && normalizeEmail(`  ${email}\t`).key === a.key;
    }),
    { numRuns: 2000 },
  );
  t.pass('7000 cases');
});

t.test('confusable spellings map to one identity', async (t) => {
  const key = (e: string) => normalizeEmail(e).key;
  t.equal(key('mıke@example.com'), key('mike@example.com'), 'dotless ı');
  t.equal(key('MİKE@example.com'), key('mike@example.com'), 'dotted İ');
  t.equal(key('\u212Aate@example.com'), key('kate@example.com'), 'Kelvin sign');
  t.equal(key('ｍｉｋｅ@example.com'), key('mike@example.com'), 'fullwidth letters');
  t.equal(key('jose\u0301@example.com'), key('jos\u00e9@example.com'), 'NFD and NFC');
  t.equal(key('ﬁona@example.com'), key('fiona@example.com'), 'ligature');
  t.equal(key('mi\u017Fs@example.com'), key('miss@example.com'), 'long s');
});

t.test('password rules: length in code points, 72-byte bcrypt limit, never a crash', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (pw) => {
      const c = code(() => validatePassword(pw, pw, 'someone@example.com', 8));
      const points = [...pw].length;
      const bytes = Buffer.byteLength(pw, 'utf8');
      if (points < 8) return c === 'password_too_short';
      if (bytes > 72) return c === 'password_too_long';
      return c === null || c === 'password_too_common';
    }),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.string({ minLength: 8, maxLength: 30 }), fc.string(), (pw, other) => {
      const c = code(() => validatePassword(pw, pw + other + 'x', 'someone@example.com', 8));
      return c === 'password_mismatch';
    }),
    { numRuns: 1000 },
  );
  // 18 different emoji (one emoji repeated is a common pattern, refused as such).
  const emoji18 = Array.from({ length: 18 }, (_, i) => String.fromCodePoint(0x1f600 + i)).join('');
  t.equal(
    code(() => validatePassword('😀'.repeat(18), undefined, 'a@b.c', 8)),
    'password_too_common',
    'one emoji repeated',
  );
  t.equal(
    code(() => validatePassword(emoji18, undefined, 'a@b.c', 8)),
    null,
    '18 emoji = 72 bytes: accepted',
  );
  t.equal(
    code(() => validatePassword(emoji18 + 'a', undefined, 'a@b.c', 8)),
    'password_too_long',
  );
  t.equal(
    code(() => validatePassword('😀'.repeat(7), undefined, 'a@b.c', 8)),
    'password_too_short',
    'counted in characters, not bytes',
  );
});
