import t from 'tap';
import { bit, decode, describe, encode, MAX_PERMISSION, OPERATIONS, parsePermission, SIGNUP_CLOSED, SIGNUP_OPEN } from '../../src/permission/bits';
import { can, GUEST, Principal } from '../../src/permission/check';

t.test('the specification values decode as documented', async (t) => {
  t.equal(SIGNUP_CLOSED, 2097025);
  t.equal(SIGNUP_OPEN, 2097057);
  const closed = decode(2097025);
  t.equal(closed.guest.peek, true);
  t.equal(closed.guest.execute, false);
  t.ok(OPERATIONS.every((op) => closed.owner[op] && closed.group[op]));
  t.equal(decode(2097057).guest.execute, true);
  t.equal(describe(2097057), 'guest: peek,execute; owner: all; group: all');
  t.equal(bit('group', 'refer'), 2 ** 20);
});

t.test('encode and decode are inverse over every value (sampled) and every single bit', async (t) => {
  for (let v = 0; v <= MAX_PERMISSION; v += 4099) {
    const d = decode(v);
    const grants = Object.fromEntries((['guest', 'owner', 'group'] as const).map((s) => [s, OPERATIONS.filter((op) => d[s][op])]));
    t.equal(encode(grants), v);
  }
  for (let i = 0; i < 21; i++) t.equal(encode(Object.fromEntries([[['guest', 'owner', 'group'][Math.floor(i / 7)], [OPERATIONS[i % 7]]]])), 2 ** i);
});

t.test('parsePermission accepts 0…2097151 and digit strings, refuses the rest', async (t) => {
  t.equal(parsePermission(0), 0);
  t.equal(parsePermission(2097151), 2097151);
  t.equal(parsePermission('2097057'), 2097057);
  for (const bad of [-1, 2097152, 1.5, NaN, Infinity, '1e3', ' 12', '-1', '0x10', '', null, undefined, true, {}, [], '99999999']) {
    t.throws(() => parsePermission(bad), { code: 'invalid_input' }, `refuses ${JSON.stringify(bad)}`);
  }
});

t.test('can(): guest, owner, group and administrator rules', async (t) => {
  const alice: Principal = { accountId: 1, referenceId: 'a', groupIds: new Set([10]), isAdmin: false };
  const admin: Principal = { accountId: 2, referenceId: 'b', groupIds: new Set(), isAdmin: true };
  const ownerRead = encode({ owner: ['read'] });
  t.equal(can(GUEST, 'read', { permission: ownerRead, ownerId: null, groupIds: [] }), false, 'owner bits never apply to a guest, even on ownerless rows');
  t.equal(can(alice, 'read', { permission: ownerRead, ownerId: 1, groupIds: [] }), true);
  t.equal(can(alice, 'read', { permission: ownerRead, ownerId: 3, groupIds: [] }), false);
  t.equal(can(alice, 'read', { permission: encode({ group: ['read'] }), ownerId: 3, groupIds: [10] }), true);
  t.equal(can(alice, 'read', { permission: encode({ group: ['read'] }), ownerId: 3, groupIds: [11] }), false);
  t.equal(can(alice, 'read', { permission: encode({ guest: ['read'] }), ownerId: 3, groupIds: [] }), true, 'guest bits apply to everyone');
  t.equal(can(admin, 'delete', { permission: 0, ownerId: null, groupIds: [] }), true);
});
