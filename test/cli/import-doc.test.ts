// docs/moving-in.md as written: its four example files saved as named, its commands run in turn
// by the packaged executable (csv-parse and yaml load from their chunks inside it), each `#   `
// line after a command found in what it printed; and every hash in the examples is one of the
// password the page names.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { docSteps, exeFolder, runExe } from '../helpers/exe';
import { PasswordHasher } from '../../src/auth/passwords';

const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'moving-in.md'), 'utf8');
const examples = [...doc.matchAll(/<!-- import-example: (\S+) -->\n```\w+\n([\s\S]*?)\n```/g)].map((m) => ({ name: m[1], text: m[2] + '\n' }));

t.test("docs/moving-in.md's examples hold the password it names", async (t) => {
  t.same(
    examples.map((e) => e.name),
    ['people.csv', 'users_database.yml', 'users.ndjson', 'realm-export.json'],
  );
  const hasher = new PasswordHasher(4, 2);
  t.teardown(() => hasher.close());
  const hashes =
    examples
      .map((e) => e.text)
      .join('\n')
      .match(/\$(2b|argon2id|6)\$[^\s",]+(,t=\d+,p=\d+\$[^\s",]+)?/g) ?? [];
  t.ok(hashes.length >= 4);
  for (const h of hashes) t.ok((await hasher.verify('correct horse battery staple', h)).ok, h.slice(0, 20));
});

t.test("docs/moving-in.md's commands work as written", async (t) => {
  const { dir, exe, env } = exeFolder(t);
  for (const e of examples) fs.writeFileSync(path.join(dir, e.name), e.text);
  t.equal(
    (await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], { env, cwd: dir, stdin: 'a long admin password' })).code,
    0,
  );
  const steps = docSteps(doc, 'import-commands');
  t.ok(steps.length >= 7, 'the block has its steps');
  for (const { line, said } of steps) {
    const r = await runExe(exe, line.replace(/^gatehouse /, '').split(' '), { env, cwd: dir });
    t.equal(r.code, 0, `${line}: exit code (${r.stderr.trim()})`);
    for (const s of said) t.ok((r.stdout + r.stderr).includes(s), `${line}: prints ${s}\n${r.stdout}${r.stderr}`);
  }
});
