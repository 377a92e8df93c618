// A directory source's sync, timed (figures, never pass/fail): Debian's slapd filled by slapadd
// with N people and N/100 groups of 100 members (each group also inside the next, ten deep at
// most), then the packaged executable's `source sync` on a fresh SQLite store: the first sync
// (everyone created), the same directory again (nothing changes), and one after 1 % of the people
// left (disabled). Prints people per second and the process's peak RSS for each size, and how the
// time grew from the smallest size to the largest (linear would be the ratio of the sizes).
// Usage: node scripts/source-bench.mjs [--sizes 1000,5000,10000] [--exe dist/gatehouse]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitForPort } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SIZES = option('sizes', '1000,5000,10000').split(',').map(Number);
const EXE = path.resolve(option('exe', path.join(root, 'dist', 'gatehouse')));
const BASE = 'dc=example,dc=org';
const ROOT_PW = 'bench-root-secret';

async function startSlapd(size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-source-bench-'));
  fs.mkdirSync(path.join(dir, 'db'));
  const conf = path.join(dir, 'slapd.conf');
  fs.writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${dir}/slapd.pid`,
      'sizelimit unlimited',
      'database mdb',
      'maxsize 4294967296',
      `suffix "${BASE}"`,
      `rootdn "cn=root,${BASE}"`,
      `rootpw ${ROOT_PW}`,
      `directory ${dir}/db`,
      'index objectClass eq',
      'index entryUUID eq',
      '',
    ].join('\n'),
  );
  const person = (i) => `uid=p${i},ou=people,${BASE}`;
  const group = (g) => `cn=team${g},ou=groups,${BASE}`;
  const out = fs.openSync(path.join(dir, 'data.ldif'), 'w');
  fs.writeSync(out, `dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: example\n\n`);
  fs.writeSync(
    out,
    `dn: ou=people,${BASE}\nobjectClass: organizationalUnit\nou: people\n\ndn: ou=groups,${BASE}\nobjectClass: organizationalUnit\nou: groups\n\n`,
  );
  for (let i = 0; i < size; i++)
    fs.writeSync(out, `dn: ${person(i)}\nobjectClass: inetOrgPerson\nuid: p${i}\ncn: Person ${i}\nsn: ${i}\nmail: p${i}@example.org\n\n`);
  const groups = Math.max(1, Math.floor(size / 100));
  for (let g = 0; g < groups; g++) {
    const members = Array.from({ length: 100 }, (_, k) => person(g * 100 + k)).filter((_, k) => g * 100 + k < size);
    // Each group holds the next one, in chains of ten: nesting as deep as Gatehouse allows.
    if (g % 10 !== 9 && g + 1 < groups) members.push(group(g + 1));
    fs.writeSync(out, `dn: ${group(g)}\nobjectClass: groupOfNames\ncn: team${g}\n${members.map((m) => `member: ${m}\n`).join('')}\n`);
  }
  fs.closeSync(out);
  execFileSync('/usr/sbin/slapadd', ['-q', '-f', conf, '-l', path.join(dir, 'data.ldif')], { stdio: 'inherit' });
  const port = await freePort();
  const child = spawn('/usr/sbin/slapd', ['-f', conf, '-h', `ldap://127.0.0.1:${port}/`, '-d', '0'], { stdio: 'ignore' });
  await waitForPort(port);
  return { url: `ldap://127.0.0.1:${port}`, dir, person, child };
}

/** Runs the executable; its wall time and peak RSS (VmHWM, read from /proc while it runs). */
function timed(args, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(EXE, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let peak = 0;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]) * 1024);
      } catch {
        /* it has exited */
      }
    }, 25);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      if (code !== 0) reject(new Error(`${args.join(' ')}: exit ${code}: ${stderr}`));
      else resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, peak, stdout });
    });
  });
}

if (!fs.existsSync('/usr/sbin/slapd') || !fs.existsSync('/usr/sbin/slapadd')) {
  console.log('slapd is not installed (apt-get install slapd ldap-utils): the sync is not measured');
  process.exit(0);
}
const mib = (b) => `${(b / 1048576).toFixed(0)} MiB`;
const rows = [];
for (const size of SIZES) {
  const slapd = await startSlapd(size);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-source-bench-store-'));
  const env = { ...process.env, GATEHOUSE_DATA_DIR: dataDir, BIND_PW: ROOT_PW };
  try {
    await timed(['migrate'], env);
    await timed(
      ['source', 'add', 'ldap', '--name', 'bench', '--url', slapd.url, '--bind-dn', `cn=root,${BASE}`, '--bind-password-env', 'BIND_PW', '--base-dn', BASE],
      env,
    );
    const first = await timed(['source', 'sync', 'bench', '--json'], env);
    const again = await timed(['source', 'sync', 'bench', '--json'], env);
    const gone = Math.max(1, Math.floor(size / 100));
    const dels = Array.from({ length: gone }, (_, i) => slapd.person(size - 1 - i));
    execFileSync('/usr/bin/ldapdelete', ['-x', '-H', slapd.url, '-D', `cn=root,${BASE}`, '-w', ROOT_PW, ...dels]);
    const left = await timed(['source', 'sync', 'bench', '--json'], env);
    const report = JSON.parse(first.stdout);
    if (report.people.created !== size) throw new Error(`expected ${size} created: ${first.stdout.slice(0, 300)}`);
    if (JSON.parse(left.stdout).people.disabled !== gone) throw new Error(`expected ${gone} disabled: ${left.stdout.slice(0, 300)}`);
    rows.push({ size, first, again, left });
  } finally {
    slapd.child.kill('SIGTERM');
    fs.rmSync(slapd.dir, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`\ndirectory source sync (slapd, SQLite, ${path.relative(root, EXE) || EXE}); people per second, peak RSS of the sync's process`);
console.log('people     first sync (all created)     again (nothing changes)      1 % gone (disabled)');
for (const r of rows) {
  const cell = (x) => `${(r.size / x.seconds).toFixed(0).padStart(6)}/s ${x.seconds.toFixed(1).padStart(6)} s ${mib(x.peak).padStart(8)}`;
  console.log(`${String(r.size).padEnd(8)} ${cell(r.first)}   ${cell(r.again)}   ${cell(r.left)}`);
}
if (rows.length > 1) {
  const [a, b] = [rows[0], rows[rows.length - 1]];
  console.log(
    `${a.size} → ${b.size} people (${(b.size / a.size).toFixed(0)}×): first sync ${(b.first.seconds / a.first.seconds).toFixed(1)}× the time, again ${(b.again.seconds / a.again.seconds).toFixed(1)}× (linear: ${(b.size / a.size).toFixed(0)}×)`,
  );
}
