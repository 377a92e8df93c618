// The third attack review's LDAP findings (issue 46, items 6-8, 10-12), each through real sockets:
// a bind ends when its account changes; StartTLS drops what was sent behind it in clear;
// strangers hold few slots for little time; every refusal pays the same hashing; a stranger's
// filter is small; a client that pipelines and never reads is read no further than answered.
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import t from 'tap';
import { BerWriter, Client } from 'ldapts';
import { frame } from '../../src/ldap/protocol';
import { startLdap } from '../../src/ldap/server';
import { MAX_PENDING, MAX_UNREAD } from '../../src/ldap/limits';
import { cli } from '../helpers/cli';
import { BASE, ldapServer, ldapTool, person, testCertificate, exchange } from '../helpers/ldap';
import { PASSWORD, withAdmin } from '../helpers/server';

const NOTICE = Buffer.from('1.3.6.1.4.1.1466.20036');

function bindRequest(id: number, dn: string, password: string): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(id);
  w.startSequence(0x60);
  w.writeInt(3);
  w.writeString(dn);
  w.writeString(password, 0x80);
  w.endSequence();
  w.endSequence();
  return w.buffer;
}

function extendedRequest(id: number, oid: string): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(id);
  w.startSequence(0x77);
  w.writeString(oid, 0x80);
  w.endSequence();
  w.endSequence();
  return w.buffer;
}

/** A search of the root DSE (or `base`) whose filter is an OR of `terms` equality terms. */
function wideSearch(id: number, terms: number, base = ''): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(id);
  w.startSequence(0x63);
  w.writeString(base);
  w.writeEnumeration(base === '' ? 0 : 2);
  w.writeEnumeration(0);
  w.writeInt(0);
  w.writeInt(0);
  w.writeBoolean(false);
  w.startSequence(0xa1);
  for (let i = 0; i < terms; i++) {
    w.startSequence(0xa3);
    w.writeString('uid');
    w.writeString(`u${i}`);
    w.endSequence();
  }
  w.endSequence();
  w.startSequence();
  w.endSequence();
  w.endSequence();
  w.endSequence();
  return w.buffer;
}

t.test('item 6: a bound connection follows its account: reader group left, disabled, app password revoked, signed out everywhere', async (t) => {
  const { s, url, make } = await ldapServer(t);
  for (const e of ['bot@example.com', 'dis@example.com', 'app@example.com', 'out@example.com']) await make(e);
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  for (const e of ['bot@example.com', 'dis@example.com', 'app@example.com', 'out@example.com']) await cli(s.dataDir, ['group', 'add', 'ldap-readers', e]);
  const secret = (await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'app@example.com', '--name', 'Gitea'])).json.secret as string;
  const bound = async (uid: string, password = PASSWORD) => {
    const c = new Client({ url, timeout: 5000 });
    t.teardown(() => c.unbind().catch(() => undefined));
    await c.bind(person(uid), password);
    return c;
  };
  const count = async (c: Client) => (await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(objectClass=person)' })).searchEntries.length;

  const bot = await bound('bot');
  t.ok((await count(bot)) >= 5, 'a reader sees everyone');
  t.equal((await cli(s.dataDir, ['group', 'remove', 'ldap-readers', 'bot@example.com'])).code, 0);
  t.equal(await count(bot), 1, 'the same connection, after leaving the reader group: only its own entry');

  const cases: Array<[string, string, string[], string | undefined]> = [
    ['disabled', 'dis', ['user', 'disable', 'dis@example.com'], undefined],
    ['signed out everywhere', 'out', ['user', 'revoke-sessions', 'out@example.com'], undefined],
  ];
  for (const [what, uid, command, password] of cases) {
    const c = await bound(uid, password);
    t.ok((await count(c)) > 1);
    t.equal((await cli(s.dataDir, command)).code, 0, command.join(' '));
    await t.rejects(count(c), `${what}: the next search on the same connection is refused and the connection ends`);
  }
  const app = await bound('app', secret);
  t.ok((await count(app)) > 1, 'bound with an app password');
  const listed = await cli(s.dataDir, ['--json', 'user', 'app-password', 'list', 'app@example.com']);
  const id = (listed.json.app_passwords ?? listed.json)[0].id ?? (listed.json.app_passwords ?? listed.json)[0].reference_id;
  t.equal((await cli(s.dataDir, ['user', 'app-password', 'revoke', 'app@example.com', id])).code, 0);
  await t.rejects(count(app), 'app password revoked: the connection ends');
  // Its notice says why, in words.
  const again = await bound('bot');
  await cli(s.dataDir, ['user', 'disable', 'bot@example.com']);
  const raw = await exchange(Number(new URL(url).port), Buffer.concat([bindRequest(1, person('dis'), PASSWORD)]), 2000);
  t.notOk(raw.got.includes(Buffer.from([0x61, 0x07, 0x0a, 0x01, 0x00])), 'a disabled account cannot bind anew either');
  await t.rejects(count(again), "a disabled reader's connection ends too");
});

t.test('item 7: a request sent behind StartTLS in the same write is not answered inside TLS; the connection ends', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'ann@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const ldap = await startLdap(
    s.core,
    {
      host: '127.0.0.1',
      port: 0,
      tlsPort: null,
      tls: testCertificate(t, '/CN=127.0.0.1'),
      baseDn: BASE,
      readers: [],
      allowInsecureBind: false,
    },
    s.core.logger,
  );
  t.teardown(() => ldap.close());
  const injected = await exchange(ldap.port!, Buffer.concat([extendedRequest(1, '1.3.6.1.4.1.1466.20037'), bindRequest(2, person('ann'), PASSWORD)]));
  t.ok(injected.closed, 'the connection ends');
  t.ok(injected.got.includes(NOTICE), 'with a notice of disconnection');
  t.ok(injected.got.includes(Buffer.from('requests sent after StartTLS before its answer')), 'saying why');
  // StartTLS done right still works (ldapwhoami -ZZ).
  const ok = await ldapTool('ldapwhoami', ['-ZZ', '-x', '-H', `ldap://127.0.0.1:${ldap.port}`, '-D', person('ann'), '-w', PASSWORD]);
  t.equal(ok.code, 0, ok.err);
});

t.test('item 8: connections that have not bound get a few slots per address, a share of all, and seconds', async (t) => {
  const { port, url, make } = await ldapServer(t);
  await make('ann@example.com');
  const open = (localAddress: string) =>
    new Promise<{ socket: net.Socket; closed: () => boolean; got: () => Buffer }>((resolve) => {
      const chunks: Buffer[] = [];
      let closed = false;
      const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve({ socket, closed: () => closed, got: () => Buffer.concat(chunks) }));
      socket.on('data', (c) => chunks.push(c));
      socket.on('close', () => (closed = true));
      socket.on('error', () => undefined);
    });
  // Nine idle connections from one address: the ninth is turned away at once.
  const one = [];
  for (let i = 0; i < 9; i++) one.push(await open('127.0.0.2'));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(one.filter((c) => c.closed()).length, 1, 'eight connections that have not bound per address');
  t.ok(one[8].got().includes(Buffer.from('too many connections')), 'the ninth is told why');
  // A bound connection from the same address is not one of them.
  const ann = new Client({ url: `ldap://127.0.0.1:${port}`, timeout: 5000 });
  await ann.bind(person('ann'), PASSWORD);
  t.teardown(() => ann.unbind().catch(() => undefined));
  // Strangers from 40 addresses (320 connections, more than the 256 strangers' share): the oldest make room.
  const many = [];
  for (let a = 10; a < 50; a++) for (let i = 0; i < 8; i++) many.push(await open(`127.0.0.${a}`));
  await new Promise((r) => setTimeout(r, 300));
  t.ok(many.filter((c) => c.closed()).length >= 64, 'the oldest strangers were closed to make room');
  const who = await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('ann'), '-w', PASSWORD]);
  t.equal(who.code, 0, 'a newcomer still gets in and binds');
  t.match(
    await ann.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=ann)' }),
    { searchEntries: [{ uid: 'ann' }] },
    'and the bound connection was kept',
  );
  // Seconds, not minutes: an idle stranger is closed after about ten.
  const idle = await open('127.0.0.99');
  await new Promise((r) => setTimeout(r, 11_000));
  t.ok(idle.closed(), 'an idle connection that never bound is closed');
  t.ok(idle.got().includes(Buffer.from('idle for too long')));
  for (const c of [...one, ...many, idle]) c.socket.destroy();
});

t.test('item 10: a locked account, an unknown uid and a wrong password pay the same hashing and get the same answer', async (t) => {
  const { s, port, make } = await ldapServer(t);
  await make('lee@example.com');
  const admin = s.adminToken;
  const hashes = async () => Number(/gatehouse_password_hashes_total (\d+)/.exec((await s.call('GET', '/metrics', { token: admin })).text)![1]);
  // One bind on a new connection: its answer.
  const bindAnswer = (uid: string, password: string) =>
    new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('data', (c) => (socket.destroy(), resolve(c.toString('latin1'))));
      socket.write(bindRequest(1, person(uid), password));
    });
  // Lock lee and a uid that does not exist the same way: ten wrong passwords each.
  for (let i = 0; i < 12; i++) {
    await bindAnswer('lee', 'a wrong password');
    await bindAnswer('nobody', 'a wrong password');
  }
  const answers = new Set<string>();
  for (const [uid, password] of [
    ['lee', PASSWORD],
    ['lee', 'a wrong password'],
    ['nobody', 'anything at all'],
    ['nobody2', 'anything at all'],
  ]) {
    const before = await hashes();
    answers.add((await bindAnswer(uid, password)).replace(/[\s\S]*?\x61/, ''));
    t.equal((await hashes()) - before, 1, `${uid} / ${password === PASSWORD ? 'the right password, locked' : 'a wrong one'}: one bcrypt check`);
  }
  t.equal(answers.size, 1, 'and the same bytes back (invalidCredentials, 49)');
  t.match([...answers][0], /invalid credentials/);
});

t.test('item 11: a stranger sends small messages with small filters; a bound reader may send more', async (t) => {
  const { s, port, make } = await ldapServer(t, { readers: ['ldap-readers'] });
  await make('bot@example.com');
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  const huge = await exchange(port, wideSearch(1, 60_000));
  t.ok(huge.closed, 'a 780 KB filter before a bind: the connection ends');
  t.ok(huge.got.includes(Buffer.from('before a bind')), 'saying why');
  const wide = await exchange(port, wideSearch(1, 100), 1500);
  t.notOk(wide.closed, 'a 100-term filter at the root DSE: answered, the connection kept');
  t.ok(wide.got.includes(Buffer.from('a filter of more than 64 terms')), 'refused in words');
  const small = await exchange(port, wideSearch(1, 10), 1500);
  t.notOk(small.got.includes(Buffer.from('terms')), 'ten terms are fine');
  // Bound first (RFC 4511 4.2.1: nothing is sent while a bind is in progress), then the search.
  const afterBind = (search: Buffer) =>
    new Promise<Buffer>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.once('data', (c) => {
        chunks.push(c);
        socket.on('data', (d) => chunks.push(d));
        socket.write(search);
        setTimeout(() => (socket.destroy(), resolve(Buffer.concat(chunks))), 1500);
      });
      socket.write(bindRequest(1, person('bot'), PASSWORD));
    });
  const bound = await afterBind(wideSearch(2, 1000, BASE));
  t.notOk(bound.includes(Buffer.from('terms')), 'bound, a 1,000-term group sync filter is answered');
  t.ok(bound.includes(Buffer.from([0x65, 0x07, 0x0a, 0x01, 0x00])), 'its search done: success');
  const tooMany = await afterBind(wideSearch(2, 5000, BASE));
  t.ok(tooMany.includes(Buffer.from('a filter of more than 4096 terms')), 'bound, past 4,096 terms: refused');
});

/** A read of the root DSE, every attribute: an answer of several hundred bytes, no store read. */
function rootDse(id: number): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(id);
  w.startSequence(0x63);
  w.writeString('');
  w.writeEnumeration(0);
  w.writeEnumeration(0);
  w.writeInt(0);
  w.writeInt(0);
  w.writeBoolean(false);
  w.writeString('objectClass', 0x87);
  w.startSequence();
  w.writeString('*');
  w.writeString('+');
  w.endSequence();
  w.endSequence();
  w.endSequence();
  return w.buffer;
}

/** The largest size the kernel may grow a TCP buffer to (the third field of tcp_rmem or tcp_wmem). */
const kernelMax = (file: string) => Number(fs.readFileSync(`/proc/sys/net/ipv4/${file}`, 'utf8').trim().split(/\s+/)[2]);

/** The bytes of one root DSE read's answer (its entry and its done), on a connection of its own. */
async function answerBytes(port: number): Promise<number> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let got: Buffer = Buffer.alloc(0);
  await new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      let rest = got;
      let frames = 0;
      for (;;) {
        const f = frame(rest);
        if (!('message' in f)) break;
        rest = f.rest;
        frames++;
      }
      if (frames === 2) resolve();
    });
    socket.write(rootDse(1));
  });
  socket.destroy();
  return got.length;
}

/**
 * A client that sends `requests` at once and reads nothing until it gets a byte on its standard
 * input, then reads until it has `count` searches' ends. Python, for the one thing Node's sockets
 * do not set: SO_RCVBUF, which fixes the client's receive buffer (the kernel no longer grows it up
 * to tcp_rmem's largest size), so what may wait there is known and small. It says the buffer's
 * size (as the kernel keeps it: twice the asked) once connected, and the searches ended at the end.
 */
const STALLED_CLIENT = `
import socket, sys, threading
port, rcvbuf, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
requests = sys.stdin.buffer.read(int(sys.stdin.buffer.readline()))
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
s.connect(('127.0.0.1', port))
print(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), flush=True)
threading.Thread(target=lambda: s.sendall(requests), daemon=True).start()
sys.stdin.buffer.read(1)
done, got = 0, b''
while done < count:
    chunk = s.recv(1 << 20)
    if not chunk:
        break
    got += chunk
    at = 0
    while len(got) - at >= 2:
        n = got[at + 1]
        head = 2 if n < 0x80 else 2 + (n & 0x7f)
        if len(got) - at < head:
            break
        length = n if n < 0x80 else int.from_bytes(got[at + 2:at + head], 'big')
        if len(got) - at < head + length:
            break
        op = got[at + head + 2 + got[at + head + 1]]
        if op == 0x65:
            done += 1
        at += head + length
    got = got[at:]
print(done, flush=True)
`;

t.test('item 12: a client that pipelines requests and never reads is read no further than it is answered', async (t) => {
  const { s, port } = await ldapServer(t);
  const searches = async () =>
    Number(/gatehouse_ldap_searches_total\{outcome="ok"\} (\d+)/.exec((await s.call('GET', '/metrics', { token: s.adminToken })).text)?.[1] ?? 0);
  const size = await answerBytes(port);
  // More requests than could ever be answered while the client reads nothing; the bound is worked
  // out below once the client's receive buffer is known (at most 2 x 64 KiB: the count covers it).
  const count = MAX_PENDING + Math.ceil((MAX_UNREAD + kernelMax('tcp_wmem') + 2 * 64 * 1024) / size) + 5_000;
  const requests = Buffer.concat(Array.from({ length: count }, (_, i) => rootDse(i + 1)));
  const before = await searches();
  const client = spawn('python3', ['-c', STALLED_CLIENT, String(port), String(64 * 1024), String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => void client.kill());
  const lines = createInterface({ input: client.stdout! })[Symbol.asyncIterator]();
  client.stdin!.write(`${requests.length}\n`);
  client.stdin!.write(requests);
  const rcvbuf = Number((await lines.next()).value);
  // While the client reads nothing, answers can wait only in the server's own buffer (it stops
  // reading at HIGH_WATER and drops the client past MAX_UNREAD), in the kernel's buffers on both
  // sides (the server's send buffer at most tcp_wmem's largest size; the client's receive buffer
  // as it set it), and as the requests already taken (MAX_PENDING). So however long it runs, and
  // however slowly, the server answers at most `bound` of them; the client sends more. (A count
  // at two moments is not the bound: a busy machine was still filling the buffers between them.)
  const bound = MAX_PENDING + Math.ceil((MAX_UNREAD + kernelMax('tcp_wmem') + rcvbuf) / size);
  t.ok(
    rcvbuf > 0 && bound < count,
    `answers of ${size} bytes, a receive buffer of ${rcvbuf}: at most ${bound} of ${count} answered while the client reads nothing`,
  );
  // Given time to run past the bound if nothing held it: until two readings agree (a few seconds
  // at most: an unbound connection that sends and reads nothing for 10 s is dropped).
  await new Promise((r) => setTimeout(r, 1000));
  let answered = (await searches()) - before;
  for (let i = 0; i < 12; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = (await searches()) - before;
    if (now === answered) break;
    answered = now;
  }
  t.ok(answered <= bound, `the server stopped answering (${answered} of ${count}, at most ${bound}) while the client reads nothing`);
  t.equal((await s.call('GET', '/ping')).status, 200, 'HTTP answers meanwhile');
  t.ok((await searches()) - before <= bound, 'and stays within the bound, holding no more than a bounded queue');
  // Once the client reads, every request is answered, none lost, the connection kept.
  client.stdin!.end('g');
  t.equal(Number((await lines.next()).value), count, 'every request answered once the client reads');
});

t.test('item 8: binding again and again on one connection adds no listener each time (no leak)', async (t) => {
  const { url, make } = await ldapServer(t);
  await make('ann@example.com');
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  const c = new Client({ url, timeout: 5000 });
  t.teardown(() => c.unbind().catch(() => undefined));
  for (let i = 0; i < 30; i++) await c.bind(person('ann'), PASSWORD);
  await new Promise((r) => setImmediate(r));
  t.same(
    warnings.filter((w) => /MaxListeners/.test(w)),
    [],
    'no MaxListenersExceededWarning',
  );
});
