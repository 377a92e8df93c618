// Hostile input on the LDAP port: malformed BER, a 2 GiB length, a 1 MiB message, filters nested
// 1,000 deep, many connections from one address, a client that reads nothing. Each such
// connection ends cleanly; the directory and HTTP keep answering.
import net from 'node:net';
import t from 'tap';
import { BerWriter } from 'ldapts';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, ldapTool, person, exchange } from '../helpers/ldap';

/** A search request whose filter is a NOT nested `depth` times around (uid=x). */
function deepSearch(depth: number): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(2);
  w.startSequence(0x63);
  w.writeString(BASE);
  w.writeEnumeration(2);
  w.writeEnumeration(0);
  w.writeInt(0);
  w.writeInt(0);
  w.writeBoolean(false);
  for (let i = 0; i < depth; i++) w.startSequence(0xa2);
  w.startSequence(0xa3);
  w.writeString('uid');
  w.writeString('x');
  w.endSequence();
  for (let i = 0; i < depth; i++) w.endSequence();
  w.startSequence();
  w.endSequence();
  w.endSequence();
  w.endSequence();
  return w.buffer;
}

t.test('hostile bytes end their connection; the directory and HTTP keep answering', async (t) => {
  const { s, port, url, make } = await ldapServer(t);
  await make('ann@example.com');
  const still = async (what: string) => {
    t.equal((await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('ann'), '-w', PASSWORD])).code, 0, `${what}: LDAP still answers`);
    t.equal((await s.call('GET', '/ping')).status, 200, `${what}: HTTP still answers`);
  };

  const garbage = await exchange(port, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  t.ok(garbage.closed, 'not BER: closed');
  await still('garbage');
  const huge = await exchange(port, Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02, 0x01, 0x01]));
  t.ok(huge.closed, 'a 2 GiB length: closed at once');
  t.ok(huge.got.includes(Buffer.from('1.3.6.1.4.1.1466.20036')), 'with a notice of disconnection');
  const big = Buffer.alloc(1024 * 1024 + 64);
  big[0] = 0x30;
  big[1] = 0x83;
  big.writeUIntBE(big.length - 5, 2, 3);
  t.ok((await exchange(port, big)).closed, 'a message over 1 MiB: closed');
  const truncated = await exchange(port, Buffer.from([0x30, 0x05, 0x02, 0x01, 0x01, 0x63, 0x7f]));
  t.ok(truncated.closed, 'a request that lies about its length inside: closed');
  await still('oversize and malformed');

  // Bound as an administrator, a filter nested 1,000 deep is refused with a result, not a crash.
  const bind = new BerWriter();
  bind.startSequence();
  bind.writeInt(1);
  bind.startSequence(0x60);
  bind.writeInt(3);
  bind.writeString(person('admin'));
  bind.writeString(PASSWORD, 0x80);
  bind.endSequence();
  bind.endSequence();
  const deep = await exchange(port, Buffer.concat([bind.buffer, deepSearch(1000)]));
  t.notOk(deep.closed, 'the connection stays open');
  t.ok(deep.got.includes(Buffer.from('a filter nested deeper than 32')), 'refused in words (unwillingToPerform)');

  // Many connections from one address: past the limit, the newest are turned away.
  let turnedAway = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: 80 },
      () =>
        new Promise<net.Socket>((resolve) => {
          const c = net.connect(port, '127.0.0.1', () => resolve(c));
          c.on('error', () => undefined);
          c.on('close', () => turnedAway++);
          c.resume();
        }),
    ),
  );
  await new Promise((r) => setTimeout(r, 500));
  t.equal(turnedAway, 72, 'past 8 connections from one address that have not bound, the newest are closed');
  for (const c of sockets) c.destroy();
  await still('a connection flood');

  // A client that asks and never reads: dropped once unread answers pile up, nothing else slows.
  const reader = net.connect(port, '127.0.0.1');
  reader.on('error', () => undefined);
  reader.pause();
  const search = deepSearch(0);
  for (let i = 0; i < 2000; i++) reader.write(Buffer.concat([bind.buffer, search]));
  await still('a client that reads nothing');
  reader.destroy();
});
