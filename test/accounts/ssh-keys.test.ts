// SSH public keys and login shells (contract section 25): what is taken (ed25519, ECDSA
// P-256/384/521, the sk- forms, RSA >= 2048, comment kept) and what is refused with why (DSA, RSA
// 1024, base64 that is no key, a huge input, bytes after the key, a type name that is not the
// data's, a private key, options, two lines, the 8 small-order ed25519 points and non-canonical
// encodings, an sk- application not ssh:, RSA moduli with a small factor, exponents OpenSSH does
// not take), at most 20 (also with 25 adds at once), a key once,
// the recent-sign-in rule for the account's own, audit rows and mails through the queue; the
// shell's rule; POSIX numbers given once to accounts made at once on SQLite.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { manualClock } from '../helpers/clock';
import { PASSWORD, startTestServer, tempDir, tokenOf } from '../helpers/server';
import { cli } from '../helpers/cli';
import { parseSshPublicKey } from '../../src/accounts/ssh-key-format';
import type { Caller } from '../../src/core';

const SK_ECDSA =
  'sk-ecdsa-sha2-nistp256@openssh.com AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBAlulpLk2cp9XsbCWxwpxgKIBpxUlSki4Y3k+0huraRzVtYy4FaKyXGZ4kyCpkdhsSrkSD8ptbeks9lzV1tGe2wAAAAEc3NoOg== yubikey';
const SK_ED25519 = 'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIKdtLKvpwRRMdmoo1Exj8/MxSVOb5zN47eJmVg9ttVP2AAAABHNzaDo= solokey';

function keygen(dir: string, type: string, comment = 'me@laptop'): { pub: string; priv: string } {
  const file = path.join(dir, `k${fs.readdirSync(dir).length}`);
  execFileSync('ssh-keygen', ['-q', '-t', ...type.split(' '), '-N', '', '-C', comment, '-f', file]);
  return { pub: fs.readFileSync(`${file}.pub`, 'utf8'), priv: fs.readFileSync(file, 'utf8') };
}
const fingerprint = (dir: string, line: string) => {
  const f = path.join(dir, 'fp.pub');
  fs.writeFileSync(f, line);
  return execFileSync('ssh-keygen', ['-l', '-f', f], { encoding: 'utf8' }).split(' ')[1];
};
/** A key line with its data changed by `change` (and re-encoded). */
const rewrite = (line: string, change: (blob: Buffer) => Buffer) => {
  const [type, data, ...rest] = line.trim().split(' ');
  return [type, change(Buffer.from(data, 'base64')).toString('base64'), ...rest].join(' ');
};
const sshString = (s: string | Buffer) => {
  const b = Buffer.from(s);
  const n = Buffer.alloc(4);
  n.writeUInt32BE(b.length);
  return Buffer.concat([n, b]);
};

/** The small-order ed25519 points: the identity, order 2, two of order 4, four of order 8 (each checked: 8P is the identity). */
const SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
];
const SK_ED25519_POINT = Buffer.from(SK_ED25519.split(' ')[1], 'base64').subarray(34, 66).toString('hex');
const ed25519Line = (hex: string) => `ssh-ed25519 ${Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.from(hex, 'hex'))]).toString('base64')}`;
const skEd25519Line = (hex: string, app: string) =>
  `sk-ssh-ed25519@openssh.com ${Buffer.concat([sshString('sk-ssh-ed25519@openssh.com'), sshString(Buffer.from(hex, 'hex')), sshString(app)]).toString('base64')}`;
const mpint = (v: bigint) => {
  let hex = v.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  if (parseInt(hex.slice(0, 2), 16) & 0x80) hex = '00' + hex;
  return sshString(Buffer.from(hex, 'hex'));
};
const rsaLine = (e: bigint, n: bigint) => `ssh-rsa ${Buffer.concat([sshString('ssh-rsa'), mpint(e), mpint(n)]).toString('base64')}`;
const rsaParts = (line: string) => {
  const b = Buffer.from(line.split(' ')[1], 'base64');
  const eLen = b.readUInt32BE(11);
  const nAt = 15 + eLen;
  return { n: BigInt('0x' + b.subarray(nAt + 4, nAt + 4 + b.readUInt32BE(nAt)).toString('hex')) };
};

async function setUp(t: Parameters<typeof startTestServer>[0]) {
  const clock = manualClock();
  const s = await startTestServer(t, {}, undefined, { clock });
  t.equal((await s.signup('admin@example.com')).status, 200);
  await s.core.accounts.create(s.core.shell, { email: 'ann@example.com', password: PASSWORD });
  const caller = (token: string): Caller => ({ token, client: '127.0.0.1', userAgent: null });
  return { s, clock, caller };
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return `${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
};

t.test('the key types taken, with their fingerprints and comments', async (t) => {
  const { s } = await setUp(t);
  const dir = tempDir(t);
  const add = (key: string) => s.core.accounts.ssh.add(s.core.shell, 'ann@example.com', key);
  for (const [type, description] of [
    ['ed25519', 'ED25519'],
    ['ecdsa -b 256', 'ECDSA P-256'],
    ['ecdsa -b 384', 'ECDSA P-384'],
    ['ecdsa -b 521', 'ECDSA P-521'],
    ['rsa -b 2048', 'RSA 2048'],
    ['rsa -b 4096', 'RSA 4096'],
  ]) {
    const { pub } = keygen(dir, type, `ann ${type}`);
    const v = await add(pub);
    t.equal(v.description, description);
    t.equal(v.fingerprint, fingerprint(dir, pub), `${type}: the fingerprint ssh-keygen prints`);
    t.equal(v.comment, `ann ${type}`, 'the comment kept, spaces and all');
    t.equal(v.line, pub.trim());
  }
  for (const [line, description] of [
    [SK_ECDSA, 'ECDSA-SK P-256'],
    [SK_ED25519, 'ED25519-SK'],
  ]) {
    const v = await add(line);
    t.equal(v.description, description);
    t.equal(v.fingerprint, fingerprint(dir, line));
  }
  const listed = await cli(s.dataDir, ['--json', 'user', 'ssh-key', 'list', 'ann@example.com']);
  t.equal(listed.json.ssh_keys.length, 8);
  t.equal(await refusal(add(SK_ED25519)), `conflict: this key (${fingerprint(dir, SK_ED25519)}) is already on the account`, 'a key once');
});

t.test('anything else refused with why, nothing stored', async (t) => {
  const { s } = await setUp(t);
  const dir = tempDir(t);
  const add = (key: string) => refusal(s.core.accounts.ssh.add(s.core.shell, 'ann@example.com', key));
  const ed = keygen(dir, 'ed25519');
  const ecdsa = keygen(dir, 'ecdsa -b 256');
  const rsa = keygen(dir, 'rsa -b 2048').pub;
  const realModulus = rsaParts(rsa).n;
  t.doesNotThrow(() => parseSshPublicKey(rsaLine(2n ** 32n - 1n, realModulus)), 'an exponent of 2^32 - 1 is taken');
  t.doesNotThrow(() => parseSshPublicKey(skEd25519Line(SK_ED25519_POINT, 'ssh:')), "a security key's own point and ssh: are taken");
  const cases: Array<[string, string, RegExp]> = [
    ['DSA', keygen(dir, 'dsa').pub, /DSA keys \(ssh-dss\) are too weak/],
    ['RSA 1024', keygen(dir, 'rsa -b 1024').pub, /an RSA key of 1024 bits is too weak \(at least 2048\)/],
    ['base64 that is no key', `ssh-ed25519 ${Buffer.from('hello, this is not a key at all').toString('base64')} x`, /does not start with a key type|data ends/],
    ['huge', `ssh-ed25519 ${'A'.repeat(100_000)}`, /100012 characters is too long for a public key/],
    ['bytes after the key', rewrite(ed.pub, (b) => Buffer.concat([b, Buffer.from('trailing')])), /8 bytes follow the key's last field/],
    ["the type name is not the data's", `ssh-rsa ${ed.pub.split(' ')[1]} x`, /the line says ssh-rsa but the key data is a ssh-ed25519 key/],
    [
      'an ECDSA curve that is not the name',
      `ecdsa-sha2-nistp384 ${rewrite(ecdsa.pub, (b) => Buffer.from(b.toString('latin1').replace('ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384'), 'latin1')).split(' ')[1]}`,
      /curve nistp384 but the key data names nistp256/,
    ],
    [
      'a point off the curve',
      rewrite(ecdsa.pub, (b) => Buffer.concat([b.subarray(0, b.length - 1), Buffer.from([b[b.length - 1] ^ 1])])),
      /P-256 point is not a valid public key/,
    ],
    [
      'an ed25519 key of 31 bytes',
      `ssh-ed25519 ${Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.alloc(31, 7))]).toString('base64')}`,
      /ed25519 key is 31 bytes, not 32/,
    ],
    ['a truncated key', rewrite(rsa, (b) => b.subarray(0, b.length - 10)), /ends inside its modulus/],
    ['a private key', ed.priv, /this is a private key|holds \d+ lines/],
    ['two keys', `${ed.pub}${rsa}`, /holds 2 lines: add one key at a time/],
    ['options before the key', `command="/bin/sh" ${ed.pub}`, /options before the key/],
    ['an unknown type', `ssh-foo AAAA x`, /"ssh-foo" is not a key type taken here/],
    ['not base64', 'ssh-ed25519 AAAA$$$$ x', /not base64/],
    ['empty', '   ', /it is empty/],
    ['a comment with control characters', `${ed.pub.trim()}\u0007bell`, /control or invisible characters/],
    // The 8 small-order ed25519 points (forged signatures verify for them), and non-canonical encodings.
    ...SMALL_ORDER.map((hex, i): [string, string, RegExp] => [
      `small-order ed25519 point ${i}`,
      ed25519Line(hex),
      /a point of small order, for which signatures can be forged/,
    ]),
    ...SMALL_ORDER.map((hex, i): [string, string, RegExp] => [`small-order sk-ed25519 point ${i}`, skEd25519Line(hex, 'ssh:'), /a point of small order/]),
    ['ed25519 y = p', ed25519Line('ed' + 'ff'.repeat(30) + '7f'), /not in its one \(canonical\) encoding/],
    ['ed25519 y = p + 2', ed25519Line('ef' + 'ff'.repeat(30) + '7f'), /not in its one \(canonical\) encoding/],
    ['ed25519 identity with a negative x', ed25519Line('01' + '00'.repeat(30) + '80'), /not in its one \(canonical\) encoding/],
    // A security key's application is ssh:… (OpenSSH takes no other).
    ['an sk- application not ssh:', skEd25519Line(SK_ED25519_POINT, 'https://example.com'), /application "https:\/\/example.com" does not start with ssh:/],
    // RSA: a modulus no product of two large primes; exponents OpenSSH does not take.
    ['an RSA modulus 00 ff…ff', rsaLine(3n, 2n ** 2048n - 1n), /RSA modulus is divisible by 3, so no product of two large primes/],
    ['an RSA modulus 2^2047 + 1', rsaLine(65537n, 2n ** 2047n + 1n), /RSA modulus is divisible by 3/],
    ['an even RSA modulus', rsaLine(65537n, 2n ** 2047n + 2n), /RSA modulus is even/],
    [
      'an RSA modulus of a small prime times a large number',
      rsaLine(65537n, 9973n * (2n ** 2040n + 1n) * 2n + 9973n),
      /RSA modulus is divisible by \d+, so no product/,
    ],
    ['an RSA exponent of 1', rsaLine(1n, realModulus), /RSA exponent is not an odd number from 3 to 2\^32/],
    ['an even RSA exponent', rsaLine(65536n, realModulus), /RSA exponent is not an odd number from 3 to 2\^32/],
    ['an RSA exponent above 2^32', rsaLine(2n ** 32n + 1n, realModulus), /RSA exponent is not an odd number from 3 to 2\^32/],
  ];
  for (const [what, key, why] of cases) t.match(await add(key), new RegExp(`^invalid_input: not an SSH public key Gatehouse takes: .*${why.source}`), what);
  t.equal((await s.db('ssh_key')).length, 0, 'nothing stored');
  t.equal((await s.db('delivery').where({ topic: 'ssh_key' })).length, 0, 'nobody told');
  // From the shell: a file too big is not read, a missing one is named.
  const big = path.join(dir, 'big.pub');
  fs.writeFileSync(big, 'x'.repeat(70_000));
  const r = await cli(s.dataDir, ['user', 'ssh-key', 'add', 'ann@example.com', big]);
  t.equal(r.code, 2);
  t.match(r.err, /is 70000 bytes: a public key is one line of a few hundred/);
  t.match((await cli(s.dataDir, ['user', 'ssh-key', 'add', 'ann@example.com', path.join(dir, 'nope.pub')])).err, /no such file/);
  const dsa = await cli(s.dataDir, ['user', 'ssh-key', 'add', 'ann@example.com', '-'], { stdin: keygen(dir, 'dsa').pub });
  t.equal(dsa.code, 2);
  t.match(dsa.err, /DSA keys/);
});

t.test('at most 20, also with 25 adds at once; audited and told by mail; removed one by one', async (t) => {
  const { s } = await setUp(t);
  const dir = tempDir(t);
  const keys = Array.from({ length: 25 }, () => keygen(dir, 'ed25519').pub);
  const outcomes = await Promise.all(keys.map((k) => refusal(s.core.accounts.ssh.add(s.core.shell, 'ann@example.com', k))));
  t.equal(outcomes.filter((o) => o === 'ok').length, 20, 'twenty taken');
  t.same(
    outcomes.filter((o) => o !== 'ok'),
    Array(5).fill('conflict: an account has at most 20 SSH keys; remove one first'),
    'five refused',
  );
  t.equal((await s.db('ssh_key')).length, 20);
  t.equal((await s.db('audit_event').where({ event: 'ssh_key_added' })).length, 20, 'each add audited');
  const mails = await s.db('delivery').where({ kind: 'mail', topic: 'ssh_key' });
  t.equal(mails.length, 20, 'each add told by mail, through the queue');
  // A mail the running server already sent has left the queue's row (its payload is cleared once
  // delivered): read a queued one, or the one the outbox holds.
  const queued = mails.find((m: { payload: string | null }) => m.payload !== null);
  const outbox = path.join(s.dataDir, 'outbox');
  const sent = () => (fs.existsSync(outbox) ? fs.readdirSync(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8')) : []);
  const mail = queued ? (JSON.parse(queued.payload) as { to: string; text: string }) : null;
  const text = mail ? `To: ${mail.to}\n${mail.text}` : (sent().find((m) => /SSH key/.test(m)) ?? '');
  t.match(text, /ann@example\.com/, 'to the account');
  t.match(text.replace(/=\r?\n/g, ''), /This SSH key was added to your account[\s\S]*ED25519 SHA256:/);
  const [first] = await s.core.accounts.ssh.list(s.core.shell, 'ann@example.com');
  const removed = await cli(s.dataDir, ['user', 'ssh-key', 'remove', 'ann@example.com', first.id]);
  t.equal(removed.code, 0, removed.err);
  t.equal((await s.db('audit_event').where({ event: 'ssh_key_removed' })).length, 1);
  t.equal((await s.db('delivery').where({ kind: 'mail', topic: 'ssh_key' })).length, 21, 'the removal told too');
  t.equal((await cli(s.dataDir, ['user', 'ssh-key', 'remove', 'ann@example.com', first.id])).code, 4, 'an unknown id');
  t.equal((await s.db('ssh_key')).length, 19);
});

t.test("the account's own: the recent-sign-in rule, and nobody else's", async (t) => {
  const { s, clock, caller } = await setUp(t);
  const dir = tempDir(t);
  const token = tokenOf(await s.action('user_account', 'signin', { email: 'ann@example.com', password: PASSWORD }));
  const me = caller(token);
  const added = await s.core.accounts.ssh.addMine(me, keygen(dir, 'ed25519').pub);
  t.equal((await s.core.accounts.ssh.listMine(me)).length, 1, 'added within the window');
  clock.advance(11 * 60 * 1000);
  t.match(
    await refusal(s.core.accounts.ssh.addMine(me, keygen(dir, 'ed25519').pub)),
    /^reauthentication_required/,
    'eleven minutes on: confirm it is you first',
  );
  t.equal(await refusal(s.core.accounts.ssh.removeMine(me, added.id)), 'ok', 'removing is no new way in');
  t.match(await refusal(s.core.accounts.ssh.add(await s.core.auth.actor(me), 'admin@example.com', keygen(dir, 'ed25519').pub)), /^forbidden/, "not another's");
});

t.test('login shells: absolute paths only, said why', async (t) => {
  const { s } = await setUp(t);
  const set = (shell: string) => cli(s.dataDir, ['user', 'set-shell', 'ann@example.com', shell]);
  for (const [shell, why] of [
    ['bash', /must be an absolute path, such as \/bin\/bash/],
    ['/bin/../tmp/sh', /may not hold a \. or \.\. part/],
    ['/bin/my shell', /with no space/],
    ['/bin/bash/', /no slash at the end/],
    [`/${'a'.repeat(250)}`, /at most 200 characters/],
  ] as const) {
    const r = await set(shell);
    t.equal(r.code, 2, shell);
    t.match(r.err, why);
  }
  t.equal((await s.db('user_account').where({ email: 'ann@example.com' }).first()).login_shell, null, 'nothing stored');
  const ok = await set('/usr/bin/zsh');
  t.equal(ok.code, 0);
  t.match(ok.out, /login shell is now \/usr\/bin\/zsh/);
  t.match((await set('/usr/bin/zsh')).out, /already \/usr\/bin\/zsh; nothing changed/);
  t.equal((await s.db('audit_event').where({ event: 'login_shell_changed' })).length, 1);
});

t.test('POSIX numbers: accounts and groups made at once on SQLite each get their own', async (t) => {
  const { s } = await setUp(t);
  const admin = await s.signin('admin@example.com');
  const body = (i: number) => ({
    data: { type: 'user_account', attributes: { email: `p${i}@example.com`, name: `P ${i}`, password: PASSWORD, passwordConfirm: PASSWORD } },
  });
  const made = await Promise.all([
    ...Array.from({ length: 12 }, (_, i) => s.call('POST', '/api/user_account', { token: admin, body: body(i) })),
    ...Array.from({ length: 4 }, (_, i) => cli(s.dataDir, ['group', 'create', `g${i}`])),
  ]);
  t.equal(made.slice(0, 12).filter((r) => (r as { status: number }).status === 201).length, 12);
  const numbers = [...(await s.db('user_account').select('posix_id')), ...(await s.db('usergroup').whereNotNull('posix_id').select('posix_id'))].map((r) =>
    Number(r.posix_id),
  );
  t.equal(new Set(numbers).size, numbers.length, 'no number twice');
  t.same(
    [...numbers].sort((a, b) => a - b),
    Array.from({ length: numbers.length }, (_, i) => 10000 + i),
    'one run from 10000',
  );
  t.equal(
    (await s.db('usergroup').whereNull('posix_id').whereNull('system_role')).length,
    14,
    "each account's own group (14 accounts) carries its account's number, none of its own",
  );
});
