// The README and docs/ are written for the people who run Gatehouse (issue 58, item 13): they
// never point at the project's internal papers (CONTRACT.md and its sections) nor speak of the
// machine the project is built and tested on ("this machine", "reachable here", "not run here")
// as if it were the reader's. What is untested is said plainly ("untested: …") instead.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const root = path.join(__dirname, '..', '..');
const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => path.join('docs', f))].filter((f) => f.endsWith('.md'));

/** Words that only make sense inside the project. Case matters for CONTRACT: "the contract" of an API is a user's word. */
const INTERNAL: [RegExp, string][] = [
  [/\bCONTRACT\b/, "the project's CONTRACT"],
  [/\bthis machine\b/i, '"this machine"'],
  [/\b(reachable|measured|run|tested|compiled|written|built) here\b/i, '"<done> here"'],
  [/\bnobody here\b/i, '"nobody here"'],
];

t.test('the README and docs/ name nothing internal to the project', async (t) => {
  for (const page of pages) {
    const lines = fs.readFileSync(path.join(root, page), 'utf8').split('\n');
    const found = lines.flatMap((line, i) => INTERNAL.filter(([re]) => re.test(line)).map(([, what]) => `${page}:${i + 1}: ${what}: ${line.trim()}`));
    t.same(found, [], `${page}: nothing internal`);
  }
});

t.test('the patterns catch what they are for', async (t) => {
  const hits = (s: string) => INTERNAL.some(([re]) => re.test(s));
  t.ok(hits('settings (CONTRACT section 15).'));
  t.ok(hits('this machine runs no systemd'));
  t.ok(hits('only the npm registry is reachable here.'));
  t.ok(hits('the lines above were not run here.'));
  t.notOk(hits('as the contract asks'), 'a lower-case contract is an ordinary word');
  t.notOk(hits('Sign out everywhere: $TOKEN is refused from here on'));
  t.notOk(hits('browsers send every *.localhost name to the computer they run on'));
});
