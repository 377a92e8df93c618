// Password hashing on worker threads (auth/hash-workers.ts): the same bcrypt as the library's,
// at a lower priority than the event loop, started on demand and ended by close().
import fs from 'node:fs';
import os from 'node:os';
import t from 'tap';
import bcrypt from 'bcrypt';
import { HASH_NICE, HashWorkers } from '../../src/auth/hash-workers';
import { PasswordHasher } from '../../src/auth/passwords';

t.test('hashes and checks agree with the bcrypt library, both ways', async (t) => {
  const hasher = new PasswordHasher(4, 2);
  t.teardown(() => hasher.close());
  const mine = await hasher.hash('a password');
  t.match(mine, /^\$2b\$04\$/);
  t.ok(await bcrypt.compare('a password', mine), 'the library accepts our hash');
  const theirs = await bcrypt.hash('another one', 4);
  t.same(await hasher.verify('another one', theirs), { ok: true, needsRehash: false });
  t.same(await hasher.verify('wrong', theirs), { ok: false, needsRehash: false });
  const older = await bcrypt.hash('another one', 5);
  t.same(await hasher.verify('another one', older), { ok: true, needsRehash: true }, 'another cost is re-hashed after signin');
  // Many at once: bounded by the gate, all answered.
  const checks = await Promise.all(Array.from({ length: 12 }, (_, i) => hasher.verify(i % 2 ? 'another one' : 'nope', theirs)));
  t.same(
    checks.map((c) => c.ok),
    Array.from({ length: 12 }, (_, i) => i % 2 === 1),
  );
  t.equal(hasher.running, 0);
});

t.test('workers run at a lower priority than the main thread, and close() ends them', async (t) => {
  const workers = new HashWorkers(2);
  const before = new Set(fs.readdirSync('/proc/self/task'));
  await Promise.all([workers.run({ op: 'hash', password: 'x', cost: 4 }), workers.run({ op: 'hash', password: 'y', cost: 4 })]);
  t.equal(workers.workers, 2);
  const added = fs.readdirSync('/proc/self/task').filter((tid) => !before.has(tid));
  const nice = added.map((tid) => Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]));
  t.ok(nice.filter((n) => n === HASH_NICE).length >= 2, `two threads at nice ${HASH_NICE} (${nice.join(',')})`);
  t.equal(os.getPriority(), 0, 'the main thread keeps its priority');
  await workers.close();
  t.equal(workers.workers, 0);
  await t.rejects(workers.run({ op: 'compare', password: 'x', hash: '$2b$04$' + 'a'.repeat(53) }), /closed/);
});
