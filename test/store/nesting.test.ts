// The closure the store keeps for nested groups, held to the edges: after any mix of nestings,
// un-nestings and deletions (seeded random), usergroup_closure is exactly every (ancestor,
// descendant) pair the edges imply, with no cycle, no chain past ten and no group inside more
// than a hundred.
// And two requests at once that would together close a cycle: exactly one is refused.
import t from 'tap';
import { MAX_ANCESTORS, MAX_NESTING_DEPTH } from '../../src/store/nesting';
import { withAdmin } from '../helpers/server';

type Edge = { parent_id: number; child_id: number };

/** Every ancestor of every group with the longest chain to it, from the edges alone. */
function closureOf(edges: readonly Edge[]): Map<string, number> {
  const parents = new Map<number, number[]>();
  for (const e of edges) parents.set(e.child_id, [...(parents.get(e.child_id) ?? []), e.parent_id]);
  const out = new Map<string, number>();
  const climb = (start: number, at: number, depth: number) => {
    for (const p of parents.get(at) ?? []) {
      const key = `${p}>${start}`;
      out.set(key, Math.max(out.get(key) ?? 0, depth));
      climb(start, p, depth + 1);
    }
  };
  for (const child of parents.keys()) climb(child, child, 1);
  return out;
}

/** A small seeded generator (mulberry32): the same run every time. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('the closure always equals what the edges imply', async (t) => {
  const s = await withAdmin(t);
  const next = random(22);
  let names: string[] = [];
  let made = 0;
  const make = async () => {
    const name = `g${made++}`;
    await s.core.groups.create(s.core.shell, { name });
    names.push(name);
  };
  for (let i = 0; i < 14; i++) await make();
  const pick = () => names[Math.floor(next() * names.length)];
  let refused = 0;
  for (let step = 0; step < 240; step++) {
    const roll = next();
    try {
      if (roll < 0.6) await s.core.groups.changeGroup(s.core.shell, pick(), pick(), 'add');
      else if (roll < 0.85) await s.core.groups.changeGroup(s.core.shell, pick(), pick(), 'remove');
      else {
        const gone = pick();
        await s.core.groups.remove(s.core.shell, gone);
        names = names.filter((n) => n !== gone);
        await make();
      }
    } catch (err) {
      t.equal((err as { code?: string }).code, 'conflict', `step ${step}: only a cycle or a depth is refused (${(err as Error).message})`);
      refused++;
    }
    if (step % 20 === 19) {
      const edges: Edge[] = (await s.db('usergroup_nesting').select('parent_id', 'child_id')).map((e: Edge) => ({
        parent_id: Number(e.parent_id),
        child_id: Number(e.child_id),
      }));
      const stored = (await s.db('usergroup_closure').select()).map(
        (r: { ancestor_id: number; descendant_id: number }) => `${Number(r.ancestor_id)}>${Number(r.descendant_id)}`,
      );
      const expected = closureOf(edges);
      t.same(stored.sort(), [...expected.keys()].sort(), `after ${step + 1} steps (${edges.length} edges): the closure matches the edges`);
      t.notOk(
        stored.some((k) => k.split('>')[0] === k.split('>')[1]),
        'no group is its own ancestor',
      );
      t.ok(Math.max(0, ...expected.values()) <= MAX_NESTING_DEPTH, 'no chain is deeper than ten');
      const above = new Map<string, number>();
      for (const k of stored) above.set(k.split('>')[1], (above.get(k.split('>')[1]) ?? 0) + 1);
      t.ok(Math.max(0, ...above.values()) <= MAX_ANCESTORS, 'no group is inside more than a hundred');
    }
  }
  t.ok(refused > 0, `some changes were refused (${refused}): the run reached cycles`);
});

t.test('two requests at once closing a cycle: one nests, one is refused, on one instance', async (t) => {
  const s = await withAdmin(t);
  const group = async (name: string) => (await s.core.groups.create(s.core.shell, { name })).reference_id;
  const nest = (parent: string, child: string) =>
    s.call('POST', `/api/usergroup/${parent}/relationships/groups`, { token: s.adminToken, body: { data: [{ type: 'usergroup', id: child }] } });
  for (let round = 0; round < 6; round++) {
    const [x, y] = [await group(`x${round}`), await group(`y${round}`)];
    const statuses = (await Promise.all([nest(x, y), nest(y, x), nest(x, y), nest(y, x)])).map((r) => r.status);
    const won = statuses.filter((st) => st === 204).length;
    t.ok(won >= 1 && won <= 4, `round ${round}: ${statuses.join(' ')}`);
    t.ok(
      statuses.every((st) => st === 204 || st === 409),
      'every answer is nested (or already) or a cycle',
    );
    const edges = await s.db('usergroup_nesting').whereIn('parent_id', s.db('usergroup').select('id').whereIn('reference_id', [x, y]));
    t.equal(edges.length, 1, 'one direction won; the other is a cycle');
  }
});
