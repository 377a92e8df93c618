// Migrations are frozen: they never import the application's code (a later change there would
// silently change what an old migration does), so their permission values are written out as
// numbers with their meaning beside them. This checks every such number against that meaning.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { encode, OPERATIONS, SIGNUP_OPEN, type Operation, type Scope } from '../../src/permission/bits';
import { TRIGRAM_INDEXED as MIGRATION_TRIGRAMS } from '../../migrations/20261124000000_filter_trigrams';
import { TRIGRAM_INDEXED } from '../../src/store/trigrams';
import { RECORD_TYPES } from '../../src/records/types';

const DIR = path.join(__dirname, '..', '..', 'migrations');
const migrations = fs.readdirSync(DIR).filter((f) => f.endsWith('.ts'));

/** "guest create; owner all; group peek, read" → the 21-bit value it means. */
function meaning(text: string): number {
  const grants: Partial<Record<Scope, Operation[]>> = {};
  for (const part of text.split(';')) {
    const [scope, ...ops] = part.trim().split(/[\s,]+/);
    grants[scope as Scope] = ops.includes('all') ? [...OPERATIONS] : (ops as Operation[]);
  }
  return encode(grants);
}

t.test('no migration imports from src', async (t) => {
  for (const file of migrations) t.notMatch(fs.readFileSync(path.join(DIR, file), 'utf8'), /from '\.\.\/src\//, file);
});

t.test('every written-out permission value means what its comment says', async (t) => {
  let checked = 0;
  for (const file of migrations) {
    const text = fs.readFileSync(path.join(DIR, file), 'utf8');
    for (const m of text.matchAll(/\b(\d{4,7})\b[,;]? (?:\/\/|\/\*) ((?:guest|owner|group)[^*\n]*?)\s*(?:\*\/|$)/gm)) {
      t.equal(Number(m[1]), meaning(m[2]), `${file}: ${m[1]} is ${m[2]}`);
      checked++;
    }
  }
  t.ok(checked >= 13, `${checked} values checked`);
  for (const file of migrations) {
    const open = /const SIGNUP_OPEN = (\d+);/.exec(fs.readFileSync(path.join(DIR, file), 'utf8'));
    if (open) t.equal(Number(open[1]), SIGNUP_OPEN, `${file}: SIGNUP_OPEN`);
  }
});

t.test('the trigram migration indexes the columns the record types filter on', async (t) => {
  t.same(MIGRATION_TRIGRAMS, TRIGRAM_INDEXED);
  for (const [table, columns] of Object.entries(TRIGRAM_INDEXED))
    t.same([...RECORD_TYPES[table as keyof typeof RECORD_TYPES].filterColumns].sort(), [...columns].sort(), table);
});
