// Seeded random LDAP (fast-check, so a failure replays with its seed): well-formed requests with
// random filters, controls and attributes, then the same bytes cut, flipped and spliced. The
// decoder answers every message with a request or an error, never a hang or a crash; on the wire
// every connection gets well-formed answers or a clean close, nothing fails unexpectedly, and the
// directory and HTTP keep answering.
import net from 'node:net';
import fc from 'fast-check';
import t from 'tap';
import { BerReader, BerWriter } from 'ldapts';
import { decode, frame } from '../../src/ldap/protocol';
import { Tree } from '../../src/ldap/tree';
import { matches } from '../../src/ldap/match';
import { cli } from '../helpers/cli';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, ldapTool, person } from '../helpers/ldap';

const SEED = 20261125;

type Filter =
  | { and: Filter[] }
  | { or: Filter[] }
  | { not: Filter }
  | { present: string }
  | { eq: [number, string, string] }
  | { sub: [string, string[]] }
  | { ext: string };

const attribute = fc.oneof(fc.constantFrom('uid', 'mail', 'cn', 'memberOf', 'objectClass', 'entryUUID', 'member', 'UID', ''), fc.string({ maxLength: 12 }));
const value = fc.oneof(fc.constantFrom('ann', 'person', '*', person('ann'), `cn=media,ou=groups,${BASE}`, ''), fc.string({ unit: 'binary', maxLength: 24 }));
const { filter } = fc.letrec<{ filter: Filter }>((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    attribute.map((a) => ({ present: a })),
    fc.tuple(fc.constantFrom(0xa3, 0xa5, 0xa6, 0xa8), attribute, value).map((eq) => ({ eq })),
    fc.tuple(attribute, fc.array(value, { maxLength: 3 })).map((sub) => ({ sub })),
    value.map((ext) => ({ ext })),
    fc.array(tie('filter'), { maxLength: 4 }).map((and) => ({ and })),
    fc.array(tie('filter'), { maxLength: 4 }).map((or) => ({ or })),
    tie('filter').map((not) => ({ not })),
  ),
}));

function writeFilter(w: BerWriter, f: Filter): void {
  if ('and' in f || 'or' in f) {
    w.startSequence('and' in f ? 0xa0 : 0xa1);
    for (const g of 'and' in f ? f.and : f.or) writeFilter(w, g);
    w.endSequence();
  } else if ('not' in f) {
    w.startSequence(0xa2);
    writeFilter(w, f.not);
    w.endSequence();
  } else if ('present' in f) w.writeString(f.present, 0x87);
  else if ('eq' in f) {
    w.startSequence(f.eq[0]);
    w.writeString(f.eq[1]);
    w.writeString(f.eq[2]);
    w.endSequence();
  } else if ('sub' in f) {
    w.startSequence(0xa4);
    w.writeString(f.sub[0]);
    w.startSequence();
    f.sub[1].forEach((v, i) => w.writeString(v, i === 0 ? 0x80 : i === f.sub[1].length - 1 ? 0x82 : 0x81));
    w.endSequence();
    w.endSequence();
  } else {
    w.startSequence(0xa9);
    w.writeString(f.ext, 0x83);
    w.endSequence();
  }
}

/** One LDAPMessage: an id, an operation written by `body`, and optional controls. */
function message(id: number, op: number, body: (w: BerWriter) => void, controls: Array<[string, boolean, number]> = []): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(id);
  w.startSequence(op);
  body(w);
  w.endSequence();
  if (controls.length) {
    w.startSequence(0xa0);
    for (const [oid, critical, size] of controls) {
      w.startSequence();
      w.writeString(oid);
      w.writeBoolean(critical);
      const v = new BerWriter();
      v.startSequence();
      v.writeInt(size);
      v.writeString('');
      v.endSequence();
      w.writeBuffer(v.buffer, 0x04);
      w.endSequence();
    }
    w.endSequence();
  }
  w.endSequence();
  return w.buffer;
}

const search = fc
  .record({
    id: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    base: fc.oneof(
      fc.constantFrom(BASE, `ou=people,${BASE}`, `ou=groups,${BASE}`, person('ann'), '', 'not a dn', `uid=x,${BASE}`),
      fc.string({ maxLength: 30 }),
    ),
    scope: fc.integer({ min: 0, max: 3 }),
    size: fc.integer({ min: 0, max: 5 }),
    typesOnly: fc.boolean(),
    filter,
    attributes: fc.array(fc.oneof(attribute, fc.constantFrom('*', '+', '1.1')), { maxLength: 4 }),
    controls: fc.array(fc.tuple(fc.constantFrom('1.2.840.113556.1.4.319', '1.2.3.4', ''), fc.boolean(), fc.integer({ min: 0, max: 3 })), { maxLength: 2 }),
  })
  .map((r) =>
    message(
      r.id,
      0x63,
      (w) => {
        w.writeString(r.base);
        w.writeEnumeration(r.scope);
        w.writeEnumeration(0);
        w.writeInt(r.size);
        w.writeInt(0);
        w.writeBoolean(r.typesOnly);
        writeFilter(w, r.filter);
        w.startSequence();
        for (const a of r.attributes) w.writeString(a);
        w.endSequence();
      },
      r.controls,
    ),
  );
const others = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 999 }), attribute, value).map(([id, a, v]) =>
    message(id, 0x6e, (w) => {
      w.writeString(`cn=media,ou=groups,${BASE}`);
      w.startSequence();
      w.writeString(a);
      w.writeString(v);
      w.endSequence();
    }),
  ),
  fc
    .tuple(fc.integer({ min: 1, max: 999 }), fc.constantFrom('1.3.6.1.4.1.4203.1.11.3', '1.2.3', ''))
    .map(([id, oid]) => message(id, 0x77, (w) => w.writeString(oid, 0x80))),
  fc.tuple(fc.integer({ min: 1, max: 999 }), value).map(([id, v]) =>
    message(id, 0x66, (w) => {
      w.writeString(person('ann'));
      w.startSequence();
      w.endSequence();
      void v;
    }),
  ),
  fc.tuple(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 0x40, max: 0x7f })).map(([id, op]) => message(id, op, () => undefined)),
);
const wellFormed = fc.oneof({ weight: 3, arbitrary: search }, { weight: 1, arbitrary: others });

/** The bytes damaged: cut short, bytes flipped, random bytes spliced in, or left alone. */
const damaged = fc.oneof(
  wellFormed,
  fc.tuple(wellFormed, fc.nat()).map(([b, n]) => b.subarray(0, n % (b.length + 1))),
  fc.tuple(wellFormed, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 })).map(([b, flips]) => {
    const c = Buffer.from(b);
    for (const [at, v] of flips) c[at % c.length] = v;
    return c;
  }),
  fc.tuple(wellFormed, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 16 })).map(([b, at, bytes]) => {
    const i = at % (b.length + 1);
    return Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)]);
  }),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.concat([Buffer.from([0x30]), Buffer.from(b)])),
);

t.test('the decoder answers every message with a request or an error', async (t) => {
  const tree = new Tree(BASE);
  const entry = tree.person({
    reference_id: 'f3c0a9c2-1111-4222-8333-944455556666',
    username: 'ann',
    email: 'ann@example.com',
    name: 'Ann',
    created_at: 0,
    groups: ['media'],
    posix_id: 10001,
    login_shell: null,
    ssh_keys: [],
    posix: { uidNumber: 10001, gidNumber: 10001, homeDirectory: '/home/ann', loginShell: '/bin/bash' },
  });
  let requests = 0;
  let refused = 0;
  fc.assert(
    fc.property(damaged, (bytes) => {
      const f = frame(bytes);
      if (!('message' in f)) return;
      let r: ReturnType<typeof decode>;
      try {
        r = decode(f.message);
      } catch (err) {
        if (!(err instanceof Error)) throw new Error(`decode threw a non-error: ${String(err)}`, { cause: err });
        refused++;
        return;
      }
      requests++;
      // A decoded filter is evaluated against an entry without throwing.
      if (r.kind === 'search' && !('refused' in r.search.filter)) matches(r.search.filter, entry);
    }),
    { seed: SEED, numRuns: 5000 },
  );
  t.ok(requests > 1000, `many decoded (${requests})`);
  t.ok(refused > 100, `many refused with an error (${refused})`);
});

/** The message ids of the answers on a connection, or null unless every one is a whole LDAPMessage with a response operation. */
function answerIds(bytes: Buffer): number[] | null {
  const ids: number[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const f = frame(rest);
    if (!('message' in f)) return null;
    const r = new BerReader(f.message);
    r.readSequence(0x30);
    const id = r.readInt();
    const op = r.peek();
    if (id === null || op === null || (op & 0x40) !== 0x40) return null;
    ids.push(id);
    rest = f.rest;
  }
  return ids;
}

/** A WhoAmI after the batch: its answer means every request before it was answered. */
const LAST = 2 ** 31 - 2;
const last = message(LAST, 0x77, (w) => w.writeString('1.3.6.1.4.1.4203.1.11.3', 0x80));

t.test('random and damaged requests on the wire: answers or a clean close, never a crash', async (t) => {
  const { s, port, url, make } = await ldapServer(t);
  await make('ann@example.com');
  // An app password: a bind on every connection without a bcrypt each.
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'admin@example.com', '--name', 'fuzz']);
  const bind = message(1, 0x60, (w) => {
    w.writeInt(3);
    w.writeString(person('admin'));
    w.writeString(app.json.secret, 0x80);
  });
  let closed = 0;
  let answered = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(damaged, { minLength: 1, maxLength: 6 }), async (batch) => {
      const got = await new Promise<{ bytes: Buffer; closed: boolean }>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        const done = (c: boolean) => {
          clearTimeout(timer);
          socket.destroy();
          resolve({ bytes: Buffer.concat(chunks), closed: c });
        };
        // Still open after this: the server waits for bytes a damaged length promised (as it should).
        const timer = setTimeout(() => done(false), 200);
        socket.on('data', (c) => {
          chunks.push(c);
          if (answerIds(Buffer.concat(chunks))?.includes(LAST)) done(false);
        });
        socket.on('close', () => done(true));
        socket.on('error', () => undefined);
        socket.write(Buffer.concat([bind, ...batch, last]));
      });
      if (got.closed) closed++;
      else answered++;
      if (answerIds(got.bytes) === null) throw new Error(`a malformed answer: ${got.bytes.toString('hex').slice(0, 200)}`);
    }),
    { seed: SEED, numRuns: 300 },
  );
  t.ok(closed > 10 && answered > 10, `some closed (${closed}), some answered (${answered})`);
  t.notMatch(s.logs.join(''), /ldap_request_failed/, 'no request failed unexpectedly');
  t.equal((await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('ann'), '-w', PASSWORD])).code, 0, 'LDAP still answers');
  t.equal((await s.call('GET', '/ping')).status, 200, 'HTTP still answers');
});
