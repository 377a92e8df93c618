// The imported hashes Gatehouse checks at a first sign-in, held to the tools that make them:
// sha512-crypt against `openssl passwd -6` (and a rounds= hash from the specification's own
// test vectors), PBKDF2 against node's pbkdf2 in Keycloak's and passlib's forms; and the ceilings
// that keep a hostile hash from burning a core (refused at import, and refused again at sign-in).
import { execFileSync } from 'node:child_process';
import { pbkdf2Sync } from 'node:crypto';
import t from 'tap';
import { PasswordHasher } from '../../src/auth/passwords';
import { checkImportedHash, pbkdf2String } from '../../src/auth/imported-hashes';
import { parseShaCrypt, shaCrypt512 } from '../../src/auth/sha-crypt';

const openssl6 = (password: string, salt: string) => execFileSync('openssl', ['passwd', '-6', '-salt', salt, password]).toString().trim();

t.test('sha512-crypt is what openssl passwd -6 makes', async (t) => {
  for (const [password, salt] of [
    ['hello', 'saltsalt'],
    ['pässwörd with spaces and a tail that runs past sixty-four bytes, to cover the long path', 'abc'],
    ['x', '0123456789abcdefXYZ'],
  ]) {
    const made = openssl6(password, salt);
    const parsed = parseShaCrypt(made)!;
    t.ok(parsed, made);
    t.equal(await shaCrypt512(password, parsed), made, `${salt}: the same string`);
  }
  // Drepper's specification, test vector 2 (rounds=10000, a salt longer than 16 characters cut to 16).
  const vector = '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.';
  t.equal(await shaCrypt512('Hello world!', parseShaCrypt(vector)!), vector, "the specification's vector");
});

t.test('the hasher checks imported hashes, marks them for re-hashing, and refuses what is over the ceilings', async (t) => {
  const hasher = new PasswordHasher(4, 2);
  t.teardown(() => hasher.close());
  const salt = Buffer.from('a salt of sixteen');
  const keycloak = pbkdf2String('sha256', 27500, salt, pbkdf2Sync('pw of mine', salt, 27500, 64, 'sha256'));
  const passlib = `$pbkdf2-sha512$25000$${salt.toString('base64').replace(/\+/g, '.').replace(/=+$/, '')}$${pbkdf2Sync('pw of mine', salt, 25000, 64, 'sha512')
    .toString('base64')
    .replace(/\+/g, '.')
    .replace(/=+$/, '')}`;
  const sha1 = pbkdf2String('sha1', 1000, salt, pbkdf2Sync('pw of mine', salt, 1000, 20, 'sha1'));
  for (const stored of [keycloak, passlib, sha1, openssl6('pw of mine', 'NaCl')]) {
    t.same(checkImportedHash(stored), { ok: true, kind: stored.startsWith('$6$') ? 'sha512-crypt' : 'pbkdf2' }, stored);
    t.same(await hasher.verify('pw of mine', stored), { ok: true, needsRehash: true }, `${stored.slice(0, 16)}: the password`);
    t.same(await hasher.verify('not mine', stored), { ok: false, needsRehash: true }, `${stored.slice(0, 16)}: another`);
  }
  const endless = `$6$rounds=999999999$abc$${'a'.repeat(86)}`;
  t.match(checkImportedHash(endless), { ok: false, reason: /exceed 100000/ });
  t.match(checkImportedHash(`$pbkdf2-sha256$i=999999999$${'A'.repeat(22)}$${'A'.repeat(43)}`), { ok: false, reason: /outside 1 to 1000000/ });
  t.match(checkImportedHash('$argon2id$v=19$m=4194304,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo'), { ok: false, reason: /exceed/ });
  t.match(checkImportedHash('$2b$20$' + 'a'.repeat(53)), { ok: false, reason: /cost 20/ });
  t.match(checkImportedHash('$pbkdf2-sha256$i=10$!!!$???'), { ok: false, reason: 'malformed PBKDF2 hash' });
  t.match(checkImportedHash('{SSHA}abc'), { ok: false, reason: /unknown hash format/ });
  const started = Date.now();
  t.same(await hasher.verify('anything', endless), { ok: false, needsRehash: false }, 'a hash over the ceiling found in the store verifies nothing');
  t.ok(Date.now() - started < 2000, 'and takes no longer than a wrong password');
});
