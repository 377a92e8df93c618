// docs/directory-sources.md as written: its commands run in turn by the packaged executable (ldapts
// loads from its chunk inside it) against Debian's slapd, with the two variables the page names
// set, each `#   ` line after a command found in what it printed.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { docSteps, exeFolder, runExe } from '../helpers/exe';
import { ADMIN_PASSWORD, groupDn, groupLdif, personDn, personLdif, startSlapd } from '../helpers/slapd';

const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'directory-sources.md'), 'utf8');

t.test("docs/directory-sources.md's commands work as written", async (t) => {
  const slapd = await startSlapd(t);
  await slapd.add(
    personLdif('alice', { password: 'alice-pw' }) +
      personLdif('bob') +
      personLdif('carol') +
      groupLdif('engineers', [personDn('alice'), personDn('bob')]) +
      groupLdif('staff', [personDn('carol'), groupDn('engineers')]),
  );
  const { dir, exe, env } = exeFolder(t);
  const shellEnv = { ...env, PATH: `${dir}:/usr/bin:/bin`, LDAP_URL: slapd.url, LDAP_BIND_PASSWORD: ADMIN_PASSWORD };
  t.equal(
    (await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], { env, cwd: dir, stdin: 'a long admin password' })).code,
    0,
  );
  const steps = docSteps(doc, 'source-commands');
  t.ok(steps.length >= 6, 'the block has its steps');
  for (const { line, said } of steps) {
    const r = await runExe('/bin/bash', ['-c', line], { env: shellEnv, cwd: dir });
    t.equal(r.code, 0, `${line}: exit code (${r.stderr.trim()})`);
    const printed = (r.stdout + r.stderr).replace(/ +/g, ' ');
    for (const s of said) t.ok(printed.includes(s.replace(/ +/g, ' ')), `${line}: prints ${s}\n${r.stdout}${r.stderr}`);
  }
});
