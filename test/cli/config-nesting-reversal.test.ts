// A configuration file that turns existing nesting around: `config apply` checks the nesting the
// file ends with, not the steps between. A chain of ten groups reversed, two groups swapped, a
// chain at the depth limit reversed and one dropped group that held the top are applied (and
// planned the same way); a file whose end state really has a cycle or a chain past ten is refused
// with the line of the entry at fault, by plan and apply alike, and nothing is written. Two
// instances applying opposite nestings at once end in one of them. After each step the closure
// (usergroup_closure) is exactly every ancestor pair the nesting implies.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { MAX_NESTING_DEPTH } from '../../src/store/nesting';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir, withAdmin, type TestServer } from '../helpers/server';

type Edge = readonly [parent: string, child: string];

/** A file of these groups (in this order), each with the groups the edges put directly inside it. */
function fileOf(names: readonly string[], edges: readonly Edge[]): string {
  const lines = ['version: 1', 'groups:'];
  for (const n of names) {
    lines.push(`  - name: ${n}`);
    const inside = edges.filter(([p]) => p === n).map(([, c]) => c);
    if (inside.length > 0) lines.push(`    groups: [${inside.join(', ')}]`);
  }
  return lines.join('\n') + '\n';
}

/** r_{n-1} ⊃ … ⊃ r1 ⊃ r0 as edges (`down`), or r0 ⊃ r1 ⊃ … (`up`). */
const chain = (names: readonly string[], way: 'down' | 'up'): Edge[] =>
  names.slice(1).map((n, i) => (way === 'up' ? ([names[i], n] as const) : ([n, names[i]] as const)));

/** The 1-based line of the groups list of `group` in a file made by fileOf. */
const groupsLine = (text: string, group: string) => text.split('\n').indexOf(`  - name: ${group}`) + 2;

/** Every nesting in the store, by name. */
async function nesting(s: TestServer): Promise<string[]> {
  const rows: Array<{ parent: string; child: string }> = await s
    .db('usergroup_nesting as n')
    .join('usergroup as p', 'p.id', 'n.parent_id')
    .join('usergroup as c', 'c.id', 'n.child_id')
    .select('p.name as parent', 'c.name as child');
  return rows.map((r) => `${r.parent}>${r.child}`).sort();
}

/**
 * The closure against the edges: every (ancestor, descendant) pair the edges imply is stored and
 * nothing else, no group is its own ancestor, no chain is longer than the limit.
 */
async function closureMatches(t: Test, s: TestServer, when: string): Promise<void> {
  const edges: Array<{ parent_id: number; child_id: number }> = await s.db('usergroup_nesting').select('parent_id', 'child_id');
  const parents = new Map<number, number[]>();
  for (const e of edges) parents.set(Number(e.child_id), [...(parents.get(Number(e.child_id)) ?? []), Number(e.parent_id)]);
  const expected = new Set<string>();
  let deepest = 0;
  const climb = (start: number, at: number, depth: number) => {
    if (depth > MAX_NESTING_DEPTH + 1) return; // past the limit: already a failure below, and a cycle must end
    for (const p of parents.get(at) ?? []) {
      expected.add(`${p}>${start}`);
      deepest = Math.max(deepest, depth);
      climb(start, p, depth + 1);
    }
  };
  for (const child of parents.keys()) climb(child, child, 1);
  const stored: string[] = (await s.db('usergroup_closure').select('ancestor_id', 'descendant_id')).map(
    (r: { ancestor_id: number; descendant_id: number }) => `${Number(r.ancestor_id)}>${Number(r.descendant_id)}`,
  );
  t.same(stored.sort(), [...expected].sort(), `${when}: the closure is exactly what the nesting implies`);
  t.notOk(
    [...expected].some((k) => k.split('>')[0] === k.split('>')[1]),
    `${when}: no cycle`,
  );
  t.ok(deepest <= MAX_NESTING_DEPTH, `${when}: no chain past ${MAX_NESTING_DEPTH} (${deepest})`);
}

const expectedNesting = (edges: readonly Edge[]) => edges.map(([p, c]) => `${p}>${c}`).sort();

/** Plans and applies `text` as `file`: both succeed, apply does what plan said, a second plan finds nothing. */
async function applies(t: Test, s: TestServer, file: string, text: string, edges: readonly Edge[], when: string) {
  fs.writeFileSync(file, text);
  const plan = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(plan.code, 2, `${when}: plan has changes: ${plan.err}`);
  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 0, `${when}: applied: ${applied.err}`);
  t.equal(applied.out, plan.out, `${when}: apply did what plan said`);
  t.same(await nesting(s), expectedNesting(edges), `${when}: the store has the file's nesting`);
  await closureMatches(t, s, when);
  t.equal((await cli(s.dataDir, ['config', 'plan', file])).code, 0, `${when}: nothing left to change`);
}

/** Plan and apply both refuse `text` with `message` at `line`, and nothing is written. */
async function refused(t: Test, s: TestServer, file: string, text: string, line: number, message: RegExp, when: string) {
  const before = {
    nesting: await nesting(s),
    closure: await s.db('usergroup_closure').count({ n: '*' }).first(),
    groups: await s.db('usergroup').count({ n: '*' }).first(),
  };
  fs.writeFileSync(file, text);
  const plan = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(plan.code, 1, `${when}: plan refuses`);
  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 3, `${when}: apply refuses`);
  for (const r of [plan, applied]) {
    t.match(r.err, `${path.basename(file)}:${line}:`, `${when}: the line of the entry at fault: ${r.err.trim()}`);
    t.match(r.err, message);
  }
  t.equal(plan.err, applied.err, `${when}: plan gives apply's verdict`);
  const after = {
    nesting: await nesting(s),
    closure: await s.db('usergroup_closure').count({ n: '*' }).first(),
    groups: await s.db('usergroup').count({ n: '*' }).first(),
  };
  t.same(after, before, `${when}: nothing written`);
  await closureMatches(t, s, `${when} (refused)`);
}

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

t.test('ten groups nested r9 ⊃ … ⊃ r0, then a file that says r0 ⊃ … ⊃ r9: applied', async (t) => {
  const s = await withAdmin(t);
  const file = path.join(tempDir(t), 'gatehouse.yaml');
  const r = names('r', 10);
  await applies(t, s, file, fileOf(r, chain(r, 'down')), chain(r, 'down'), 'r9 ⊃ … ⊃ r0');
  await applies(t, s, file, fileOf(r, chain(r, 'up')), chain(r, 'up'), 'reversed: r0 ⊃ … ⊃ r9');
  // And back, listed the other way round (the order of the list changes nothing).
  await applies(t, s, file, fileOf([...r].reverse(), chain(r, 'down')), chain(r, 'down'), 'reversed again');
});

t.test('a ⊃ b, then a file that says b ⊃ a: applied', async (t) => {
  const s = await withAdmin(t);
  const file = path.join(tempDir(t), 'gatehouse.yaml');
  await applies(t, s, file, fileOf(['a', 'b'], [['a', 'b']]), [['a', 'b']], 'a ⊃ b');
  // b listed first: its new inner group a is put in before a's list is read.
  await applies(t, s, file, fileOf(['b', 'a'], [['b', 'a']]), [['b', 'a']], 'swapped: b ⊃ a');
  await applies(t, s, file, fileOf(['a', 'b'], [['a', 'b']]), [['a', 'b']], 'swapped back, a listed first');
});

t.test('the depth limit is held on the end state: a chain at the limit reverses, one past it is refused', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.yaml');
  // Eleven groups: ten nestings, the most allowed. Reversed, it is ten nestings again.
  const d = names('d', 11);
  await applies(t, s, file, fileOf(d, chain(d, 'down')), chain(d, 'down'), 'd10 ⊃ … ⊃ d0 (ten deep)');
  await applies(t, s, file, fileOf(d, chain(d, 'up')), chain(d, 'up'), 'reversed at the limit: d0 ⊃ … ⊃ d10');

  // Reversed with a twelfth group on top: eleven nestings in the end state. The entry that makes
  // the chain too long (d10 inside d11) is named; d11 is not made.
  const past = [...d, 'd11'];
  const text = fileOf(past, chain(past, 'down'));
  await refused(
    t,
    s,
    file,
    text,
    groupsLine(text, 'd11'),
    /putting d10 inside d11 would make a chain of 11 nested groups; at most 10 are allowed/,
    'd11 ⊃ … ⊃ d0',
  );
  t.notOk(
    (await cli(s.dataDir, ['--json', 'group', 'list'])).json.groups.some((g: { name: string }) => g.name === 'd11'),
    'the refused file made no group',
  );

  // A group the file drops (an earlier apply made it: deleted) sat on top of e0; e0 ⊃ … ⊃ e10 is
  // ten deep only once it has gone, which is the end state.
  const e = names('e', 11);
  const start: Edge[] = [...chain(e.slice(0, 10), 'down'), ['top', 'e0']];
  const other = path.join(dir, 'other.yaml');
  await applies(t, s, other, fileOf(['top', ...e.slice(0, 10)], start), [...chain(d, 'up'), ...start], 'e9 ⊃ … ⊃ e0, top ⊃ e0');
  await applies(t, s, other, fileOf(e, chain(e, 'up')), [...chain(d, 'up'), ...chain(e, 'up')], 'top dropped, e0 ⊃ … ⊃ e10');
});

t.test('a file whose end state has a cycle is still refused, reversal or not', async (t) => {
  const s = await withAdmin(t);
  const file = path.join(tempDir(t), 'gatehouse.yaml');
  const r = names('r', 3);
  await applies(t, s, file, fileOf(r, chain(r, 'down')), chain(r, 'down'), 'r2 ⊃ r1 ⊃ r0');
  // Reversed and closed: r0 ⊃ r1 ⊃ r2 ⊃ r0.
  const cycle = fileOf(r, [...chain(r, 'up'), ['r2', 'r0']]);
  await refused(t, s, file, cycle, groupsLine(cycle, 'r2'), /a cycle: r2 is already inside r0/, 'r0 ⊃ r1 ⊃ r2 ⊃ r0');
  // Two groups inside each other, one of them new.
  const two = fileOf([...r, 'r3'], [...chain(r, 'down'), ['r3', 'r2'], ['r2', 'r3']]);
  await refused(t, s, file, two, groupsLine(two, 'r3'), /a cycle: r3 is already inside r2/, 'r2 ⊃ r3 ⊃ r2');
});

t.test('two instances applying opposite nestings at once: one of them, a closure to match, no cycle', async (t) => {
  const a = await withAdmin(t);
  const b = await startTestServer(t, {}, a.dataDir);
  const file = path.join(tempDir(t), 'gatehouse.yaml');
  const r = names('r', 10);
  const [down, up] = [chain(r, 'down'), chain(r, 'up')];
  const apply = (s: TestServer, edges: readonly Edge[]) => s.core.configFile.apply(s.core.shell, fileOf(r, edges), file, {});
  await apply(a, down);
  for (let round = 0; round < 6; round++) {
    const [first, second] = round % 2 === 0 ? [up, down] : [down, up];
    const results = await Promise.allSettled([apply(a, first), apply(b, second)]);
    t.same(
      results.map((x) => x.status),
      ['fulfilled', 'fulfilled'],
      `round ${round}: both applied, one after the other (${results.map((x) => (x.status === 'rejected' ? String(x.reason) : 'ok')).join(', ')})`,
    );
    const now = await nesting(a);
    t.ok(
      [expectedNesting(down), expectedNesting(up)].some((e) => JSON.stringify(e) === JSON.stringify(now)),
      `round ${round}: the nesting is one file's`,
    );
    await closureMatches(t, a, `round ${round}`);
  }
});
