// Issue 57, item 7: one classifier of addresses for every request Gatehouse sends of its own
// (webhooks, SCIM push targets). Each host is read by the WHATWG URL parser first, as a target URL
// is, so every spelling it accepts is judged as the address it becomes: IPv4 in decimal, octal,
// hex and short forms; IPv6 expanded, abbreviated, mixed with a dotted quad; IPv4 inside IPv6
// (compatible, mapped, translated, NAT64, 6to4). `[::127.0.0.1]`, `[::a9fe:a9fe]`,
// `[64:ff9b:1::a9fe:a9fe]` and `198.18.0.1` were taken as public before.
import t from 'tap';
import { addressKind, canonicalAddress, refusedKind, targetPolicy } from '../../src/config/address-ranges';
import { guardedLookup, type Resolve } from '../../src/runtime/targets';

/** [host as typed in a URL, the kind it is (null: public)]. */
const TABLE: Array<[string, string | null]> = [
  // IPv4 loopback in every spelling the URL parser reads
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['2130706433', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['0x7f.1', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.1', 'loopback'],
  ['0x7F.0.0.01', 'loopback'],
  ['127.0.0.1.', 'loopback'],
  // the rest of IPv4's special-purpose blocks
  ['0.0.0.0', 'unspecified'],
  ['0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['012.0.0.1', 'private'],
  ['167772161', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'private'],
  ['100.127.255.255', 'private'],
  ['169.254.169.254', 'link-local'],
  ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
  ['2852039166', 'link-local'],
  ['192.0.0.170', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.9', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['224.0.0.1', 'reserved'],
  ['239.255.255.250', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  // IPv4 public, at the edges of the blocks above
  ['8.8.8.8', null],
  ['134744072', null],
  ['1.1.1.1', null],
  ['100.63.255.255', null],
  ['100.128.0.0', null],
  ['172.15.255.255', null],
  ['172.32.0.0', null],
  ['198.17.255.255', null],
  ['198.20.0.0', null],
  ['223.255.255.255', null],
  // IPv6 loopback and unspecified, every spelling
  ['[::1]', 'loopback'],
  ['[0:0:0:0:0:0:0:1]', 'loopback'],
  ['[0000:0000:0000:0000:0000:0000:0000:0001]', 'loopback'],
  ['[::0:1]', 'loopback'],
  ['[::]', 'unspecified'],
  ['[0::0]', 'unspecified'],
  // IPv4-compatible ::/96 (deprecated): the IPv4 address it carries, or reserved
  ['[::127.0.0.1]', 'loopback'],
  ['[::7f00:1]', 'loopback'],
  ['[0:0:0:0:0:0:7f00:1]', 'loopback'],
  ['[::a9fe:a9fe]', 'link-local'],
  ['[::169.254.169.254]', 'link-local'],
  ['[::10.0.0.1]', 'private'],
  ['[::a00:1]', 'private'],
  ['[::c0a8:101]', 'private'],
  ['[::8.8.8.8]', 'reserved'],
  ['[::2]', 'unspecified'],
  // IPv4-mapped ::ffff:0:0/96 and translated ::ffff:0:0:0/96
  ['[::ffff:127.0.0.1]', 'loopback'],
  ['[::ffff:7f00:1]', 'loopback'],
  ['[0:0:0:0:0:ffff:7f00:1]', 'loopback'],
  ['[::FFFF:127.0.0.1]', 'loopback'],
  ['[::ffff:169.254.169.254]', 'link-local'],
  ['[::ffff:10.0.0.1]', 'private'],
  ['[::ffff:0.0.0.0]', 'unspecified'],
  ['[::ffff:0:7f00:1]', 'loopback'],
  ['[::ffff:0:a9fe:a9fe]', 'link-local'],
  ['[::ffff:8.8.8.8]', null],
  // NAT64: the well-known prefix carries the IPv4 address; the local-use prefix is this network's
  ['[64:ff9b::127.0.0.1]', 'loopback'],
  ['[64:ff9b::7f00:1]', 'loopback'],
  ['[64:ff9b::a9fe:a9fe]', 'link-local'],
  ['[64:ff9b::10.0.0.1]', 'private'],
  ['[64:ff9b::8.8.8.8]', null],
  ['[64:ff9b:1::a9fe:a9fe]', 'reserved'],
  ['[64:ff9b:1::8.8.8.8]', 'reserved'],
  ['[64:ff9b:1:ffff::1]', 'reserved'],
  // 6to4 2002::/16: the IPv4 address in its second and third words
  ['[2002:7f00:1::1]', 'loopback'],
  ['[2002:7f00:0001:0000::]', 'loopback'],
  ['[2002:a9fe:a9fe::1]', 'link-local'],
  ['[2002:a00:1::]', 'private'],
  ['[2002:c0a8:101::1]', 'private'],
  ['[2002:808:808::1]', null],
  // Teredo and the rest of 2001::/23, documentation
  ['[2001::1]', 'reserved'],
  ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'reserved'],
  ['[2001:2::1]', 'reserved'],
  ['[2001:db8::1]', 'reserved'],
  ['[3fff::1]', 'reserved'],
  // link-local, unique-local, site-local, multicast, outside 2000::/3
  ['[fe80::1]', 'link-local'],
  ['[FE80::a:b:c:d]', 'link-local'],
  ['[febf:ffff::1]', 'link-local'],
  ['[fc00::1]', 'unique-local'],
  ['[fd00::1]', 'unique-local'],
  ['[fd12:3456:789a::1]', 'unique-local'],
  ['[fec0::1]', 'unique-local'],
  ['[feff::1]', 'unique-local'],
  ['[ff02::1]', 'reserved'],
  ['[ff05::1:3]', 'reserved'],
  ['[100::1]', 'reserved'],
  ['[::1:0:0:1]', 'reserved'],
  ['[4000::1]', 'reserved'],
  ['[5f00::1]', 'reserved'],
  ['[1fff:ffff::1]', 'reserved'],
  // IPv6 public
  ['[2606:4700:4700::1111]', null],
  ['[2a00:1450:4001:800::200e]', null],
  ['[2001:4860:4860::8888]', null],
  ['[2001:200::1]', null],
  ['[3ffe::1]', null],
];

t.test('every spelling of a host, as the URL parser reads it, has the kind of the address it is', async (t) => {
  const none = targetPolicy([]);
  for (const [host, kind] of TABLE) {
    const url = new URL(`http://${host}/x`);
    t.equal(addressKind(url.hostname), kind, `${host} (${url.hostname})`);
    t.equal(refusedKind(url.hostname, none), kind, `${host}: refused as ${kind ?? 'nothing'} with no exception`);
  }
});

t.test('the classifier reads raw hosts as the URL parser does, and zone ids and brackets as the resolver gives them', async (t) => {
  for (const [raw, want] of [
    ['0x7f.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['[::127.0.0.1]', '::7f00:1'],
    ['::127.0.0.1', '::7f00:1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[fe80::1%25eth0]', 'fe80::1'],
    ['0:0:0:0:0:ffff:7f00:1', '::ffff:7f00:1'],
  ] as const)
    t.equal(canonicalAddress(raw), want, raw);
  for (const raw of ['localhost', 'example.com', '', '1.2.3.4.5', '[::1', 'fe80::1::1'])
    t.equal(refusedKind(raw, targetPolicy([])), 'unknown', `${JSON.stringify(raw)} is no address: refused`);
  t.equal(addressKind('fe80::1%eth0'), 'link-local');
  t.equal(addressKind('::ffff:127.0.0.1'), 'loopback', 'a peer address on a dual-stack socket');
});

t.test("the operator's exceptions: a kind covers its IPv4 address inside IPv6; a block covers only itself", async (t) => {
  const loopback = targetPolicy(['loopback']);
  for (const host of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::7f00:1', '64:ff9b::7f00:1'])
    t.equal(refusedKind(host, loopback), null, `${host} allowed by loopback`);
  for (const host of ['10.0.0.1', '169.254.169.254', '::a9fe:a9fe', '198.18.0.1', 'fd00::1']) t.not(refusedKind(host, loopback), null, `${host} still refused`);
  const lab = targetPolicy(['198.18.0.0/15', '64:ff9b:1::/48', '10.1.2.0/24']);
  t.equal(refusedKind('198.18.0.1', lab), null, 'the benchmarking block, named');
  t.equal(refusedKind('64:ff9b:1::a9fe:a9fe', lab), null, 'the local-use NAT64 prefix, named');
  t.equal(refusedKind('::ffff:10.1.2.3', lab), null, 'a named IPv4 block covers its mapped form');
  t.equal(refusedKind('10.1.3.1', lab), 'private', 'the rest of 10/8 is not');
  t.equal(refusedKind('169.254.169.254', targetPolicy(['link-local'])), null);
  t.equal(refusedKind('fec0::1', targetPolicy(['unique-local'])), null);
  t.throws(() => targetPolicy(['loopbak']), { code: 'invalid_input' });
  t.throws(() => targetPolicy(['10.0.0.0/33']), { code: 'invalid_input' });
});

t.test('every address a name resolves to is classified before any is dialled', async (t) => {
  const answering =
    (...addresses: string[]): Resolve =>
    (_host, _options, callback) =>
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  const lookup = (resolve: Resolve, policy = targetPolicy([])) =>
    new Promise<{ err: (Error & { code?: string }) | null; address: unknown }>((done) =>
      guardedLookup(policy, resolve)('target.example', { all: true }, (err, address) => done({ err, address })),
    );
  for (const [answers, kind] of [
    [['127.0.0.1'], 'loopback'],
    [['::1'], 'loopback'],
    [['::ffff:7f00:1'], 'loopback'],
    [['::7f00:1'], 'loopback'],
    [['64:ff9b::a9fe:a9fe'], 'link-local'],
    [['64:ff9b:1::a9fe:a9fe'], 'reserved'],
    [['fe80::1%eth0'], 'link-local'],
    [['198.18.0.1'], 'reserved'],
    [['93.184.215.14', '10.0.0.1'], 'private'],
    [['2606:4700::1', 'fd00::1'], 'unique-local'],
  ] as const) {
    const r = await lookup(answering(...answers));
    t.equal(r.err?.code, 'ETARGETREFUSED', `${answers.join(', ')} refused`);
    t.match(r.err?.message, new RegExp(`is a ${kind} address`));
  }
  const ok = await lookup(answering('93.184.215.14', '2606:4700::1'));
  t.equal(ok.err, null, 'public answers pass');
  t.same(
    (ok.address as Array<{ address: string }>).map((a) => a.address),
    ['93.184.215.14', '2606:4700::1'],
  );
  t.equal((await lookup(answering('127.0.0.1'), targetPolicy(['loopback']))).err, null, 'allowed when named');
  t.equal((await lookup(answering())).err?.code, 'ENOTFOUND', 'no answer is no address');
});
