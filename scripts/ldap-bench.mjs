// The LDAP directory's speed beside Debian's slapd (figures, never pass/fail), in one run: the
// packaged executable on its default SQLite store and slapd (back_mdb, indexes on uid, mail and
// uniqueMember) holding the same people and group, each started here on a free port.
//   search by uid/s       Gitea's login search, `(&(objectClass=person)(uid=seedK))`, random K
//   POSIX search by uid/s sssd's login lookup, `(&(uid=seedK)(objectClass=posixAccount)…)` with the POSIX attributes
//   group search/s        Nextcloud's `(&(objectClass=groupOfUniqueNames)(uniqueMember=<dn>))`
//   app-password bind/s   Gatehouse binding with an app password; slapd a simple bind ({SSHA})
//   password bind/s       Gatehouse binding with a bcrypt password, beside the bcrypt ceiling
// at 1,000 and 100,000 accounts (searches should not grow past log n). The load comes from this
// process over raw sockets (requests encoded once by ldapts's message classes), `connections`
// at a time, each waiting for its answer before the next: the same client for both servers.
// Usage: node scripts/ldap-bench.mjs [--sizes 1000,100000 --duration 5 --connections 8]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteKnex } from './sqlite-knex.mjs';
import { BerReader, BindRequest, FilterParser, SearchRequest } from 'ldapts';
import { bcryptCeiling, freePort, spawnJsonLine, stop, waitForPort } from './process.mjs';
import { seedAccounts } from './scale.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PASSWORD = 'benchmark password 1234';
const BASE = 'dc=example,dc=com';
const MEDIA = 10;
const person = (u) => `uid=${u},ou=people,${BASE}`;

/** Gatehouse with `size` accounts (admin + seed1 … seed(size-1)), media = seed1 … seed10, an app password for admin. */
async function startGatehouse(size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ldap-bench-'));
  const exe = path.join(root, 'dist', 'gatehouse');
  const dataDir = path.join(dir, 'data');
  const cli = (...args) => execFileSync(exe, ['--data-dir', dataDir, ...args], { encoding: 'utf8', env: { ...process.env, PW: PASSWORD } });
  cli('bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW');
  const knex = sqliteKnex(path.join(dataDir, 'gatehouse.sqlite'));
  await seedAccounts(knex, 'sqlite', size - 1);
  await knex.destroy();
  cli('group', 'create', 'media');
  for (let i = 1; i <= MEDIA; i++) cli('group', 'add', 'media', `seed${i}@scale.example`);
  const app = JSON.parse(cli('--json', 'user', 'app-password', 'add', 'admin@example.com', '--name', 'bench')).secret;
  const port = await freePort();
  const server = spawnJsonLine(exe, ['serve', '--port', '0', '--data-dir', dataDir, '--ldap-port', String(port), '--ldap-base-dn', BASE]);
  running.add(server.child);
  await server.ready;
  return { port, app, stop: () => stop(server.child), dir };
}

/** slapd with the same tree: people (userPassword {SSHA} of the same password), groups with member and uniqueMember. */
async function startSlapd(size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-slapd-bench-'));
  fs.mkdirSync(path.join(dir, 'db'));
  const conf = path.join(dir, 'slapd.conf');
  fs.writeFileSync(
    conf,
    `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile ${dir}/slapd.pid
database mdb
maxsize 4294967296
suffix "${BASE}"
rootdn "cn=root,${BASE}"
directory ${dir}/db
index objectClass eq
index uid eq
index mail eq
index uniqueMember eq
index member eq
access to attrs=userPassword by anonymous auth by * none
access to * by users read
`,
  );
  const hash = execFileSync('/usr/sbin/slappasswd', ['-h', '{SSHA}', '-s', PASSWORD], { encoding: 'utf8' }).trim();
  const entry = (u, n) =>
    `dn: ${person(u)}\nobjectClass: inetOrgPerson\nuid: ${u}\ncn: ${n}\nsn: ${n.split(' ').pop()}\nmail: ${u === 'admin' ? 'admin@example.com' : `${u}@scale.example`}\nuserPassword: ${hash}\n\n`;
  const members = Array.from({ length: MEDIA }, (_, i) => person(`seed${i + 1}`));
  const ldif = fs.openSync(path.join(dir, 'data.ldif'), 'w');
  fs.writeSync(ldif, `dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: example\n\n`);
  fs.writeSync(
    ldif,
    `dn: ou=people,${BASE}\nobjectClass: organizationalUnit\nou: people\n\ndn: ou=groups,${BASE}\nobjectClass: organizationalUnit\nou: groups\n\n`,
  );
  fs.writeSync(ldif, entry('admin', 'Admin'));
  for (let i = 1; i < size; i++) fs.writeSync(ldif, entry(`seed${i}`, `Seed ${i}`));
  // groupOfNames and groupOfUniqueNames are both structural in OpenLDAP's schema: two entries' worth of
  // attributes cannot share one entry, so the group is a groupOfUniqueNames (what the search asks for).
  fs.writeSync(ldif, `dn: cn=media,ou=groups,${BASE}\nobjectClass: groupOfUniqueNames\ncn: media\n${members.map((m) => `uniqueMember: ${m}\n`).join('')}\n`);
  fs.closeSync(ldif);
  execFileSync('/usr/sbin/slapadd', ['-q', '-f', conf, '-l', path.join(dir, 'data.ldif')], { stdio: 'inherit' });
  const port = await freePort();
  const child = spawn('/usr/sbin/slapd', ['-f', conf, '-h', `ldap://127.0.0.1:${port}/`, '-d', '0'], { stdio: 'ignore' });
  running.add(child);
  await waitForPort(port);
  return { port, stop: () => stop(child), dir };
}

/** The result code of each LDAPResult-bearing answer (bind response 0x61, search done 0x65) in `buffer`; the rest. */
function results(buffer) {
  const codes = [];
  let rest = buffer;
  for (;;) {
    if (rest.length < 2) break;
    const reader = new BerReader(rest);
    if (reader.readSequence(0x30) === null) break;
    const end = reader.offset + reader.length;
    if (rest.length < end) break;
    reader.readInt();
    const op = reader.peek();
    if (op === 0x61 || op === 0x65) {
      reader.readSequence(op);
      codes.push(reader.readEnumeration());
    }
    rest = rest.subarray(end);
  }
  return { codes, rest };
}

/**
 * Operations per second over `connections` connections for `seconds`: each connection binds as
 * `bind` first, then sends `next(id)` and waits for its result, again and again.
 */
async function load(port, { bind, next, seconds, connections }) {
  let done = 0;
  let failed = 0;
  const until = Date.now() + seconds * 1000;
  const one = () =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let buffer = Buffer.alloc(0);
      let id = 1;
      let bound = false;
      socket.on('error', reject);
      socket.on('connect', () => socket.write(new BindRequest({ messageId: id, dn: bind.dn, password: bind.password }).write()));
      socket.on('data', (chunk) => {
        const r = results(buffer.length ? Buffer.concat([buffer, chunk]) : chunk);
        buffer = r.rest;
        for (const code of r.codes) {
          if (!bound) {
            if (code !== 0) return reject(new Error(`the first bind answered ${code}`));
            bound = true;
          } else if (code === 0) done++;
          else failed++;
          if (Date.now() >= until) {
            socket.end();
            return resolve();
          }
          socket.write(next(++id));
        }
      });
    });
  await Promise.all(Array.from({ length: connections }, one));
  return { rps: done / seconds, failed };
}

const random = (size) => 1 + Math.floor(Math.random() * (size - 1));
const searchUid = (size) => (id) =>
  new SearchRequest({
    messageId: id,
    baseDN: `ou=people,${BASE}`,
    scope: 'sub',
    filter: FilterParser.parseString(`(&(objectClass=person)(uid=seed${random(size)}))`),
    attributes: ['uid', 'mail', 'cn'],
  }).write();
/** What sssd asks for a login: the person by uid, as posixAccount, with the POSIX attributes and SSH keys. */
const searchPosix = (size) => (id) =>
  new SearchRequest({
    messageId: id,
    baseDN: `ou=people,${BASE}`,
    scope: 'sub',
    filter: FilterParser.parseString(`(&(uid=seed${random(size)})(objectClass=posixAccount)(uidNumber=*)(!(uidNumber=0)))`),
    attributes: ['uid', 'uidNumber', 'gidNumber', 'homeDirectory', 'loginShell', 'gecos', 'cn', 'sshPublicKey', 'memberOf'],
  }).write();
const searchGroups = (size) => (id) =>
  new SearchRequest({
    messageId: id,
    baseDN: `ou=groups,${BASE}`,
    scope: 'sub',
    filter: FilterParser.parseString(`(&(objectClass=groupOfUniqueNames)(uniqueMember=${person(`seed${random(Math.min(size, 2 * MEDIA))}`)}))`),
    attributes: ['cn'],
  }).write();
const bindAs = (dn, password) => (id) => new BindRequest({ messageId: id, dn, password }).write();

/** Servers this script started, stopped if it fails half-way. */
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function ldapFigures({ sizes = [1000, 100000], duration = 5, connections = 8 } = {}) {
  const rows = [];
  const ceiling = await bcryptCeiling(PASSWORD, 11, duration);
  for (const size of sizes) {
    const gh = await startGatehouse(size);
    const ghAdmin = { dn: person('admin'), password: gh.app };
    const row = { size, ceiling };
    try {
      row.ghUid = await load(gh.port, { bind: ghAdmin, next: searchUid(size), seconds: duration, connections });
      row.ghPosix = await load(gh.port, { bind: ghAdmin, next: searchPosix(size), seconds: duration, connections });
      row.ghGroup = await load(gh.port, { bind: ghAdmin, next: searchGroups(size), seconds: duration, connections });
      row.ghAppBind = await load(gh.port, { bind: ghAdmin, next: bindAs(ghAdmin.dn, gh.app), seconds: duration, connections });
      row.ghPasswordBind = await load(gh.port, {
        bind: ghAdmin,
        next: () => bindAs(person(`seed${random(size)}`), PASSWORD)(2),
        seconds: duration,
        connections,
      });
    } finally {
      await gh.stop();
      fs.rmSync(gh.dir, { recursive: true, force: true });
    }
    const sl = await startSlapd(size);
    const slAdmin = { dn: person('admin'), password: PASSWORD };
    try {
      row.slUid = await load(sl.port, { bind: slAdmin, next: searchUid(size), seconds: duration, connections });
      row.slGroup = await load(sl.port, { bind: slAdmin, next: searchGroups(size), seconds: duration, connections });
      row.slBind = await load(sl.port, { bind: slAdmin, next: bindAs(slAdmin.dn, PASSWORD), seconds: duration, connections });
    } finally {
      await sl.stop();
      fs.rmSync(sl.dir, { recursive: true, force: true });
    }
    rows.push(row);
  }
  return rows;
}

export function printLdap(rows) {
  const f = (x) => x.rps.toFixed(0) + (x.failed ? ` (${x.failed} refused)` : '');
  const r = (a, b) => (a.rps / b.rps).toFixed(2);
  console.log(`bcrypt ceiling: ${rows[0].ceiling.toFixed(1)} verifications/s at cost 11 with all ${os.availableParallelism()} cores busy`);
  for (const row of rows) {
    console.log(`\n${row.size.toLocaleString('en-US')} accounts          Gatehouse      slapd   ratio   goal`);
    console.log(`  search by uid/s       ${f(row.ghUid).padStart(9)}  ${f(row.slUid).padStart(9)}   ${r(row.ghUid, row.slUid).padStart(5)}   >= 0.5`);
    console.log(
      `  POSIX search by uid/s ${f(row.ghPosix).padStart(9)}          -       -   >= search by uid/s (sssd's login lookup, POSIX attributes and keys)`,
    );
    console.log(`  group search/s        ${f(row.ghGroup).padStart(9)}  ${f(row.slGroup).padStart(9)}   ${r(row.ghGroup, row.slGroup).padStart(5)}   >= 0.5`);
    console.log(
      `  app-password bind/s   ${f(row.ghAppBind).padStart(9)}  ${f(row.slBind).padStart(9)}   ${r(row.ghAppBind, row.slBind).padStart(5)}   >= 0.5 (slapd: simple bind, {SSHA})`,
    );
    console.log(
      `  password bind/s       ${f(row.ghPasswordBind).padStart(9)}  ${row.ceiling.toFixed(1).padStart(9)}   ${(row.ghPasswordBind.rps / row.ceiling).toFixed(2).padStart(5)}   >= 0.9 (beside: the bcrypt ceiling)`,
    );
  }
  if (rows.length > 1) {
    const [a, b] = [rows[0], rows[rows.length - 1]];
    console.log(
      `\n${a.size.toLocaleString('en-US')} → ${b.size.toLocaleString('en-US')} accounts: search by uid ${(b.ghUid.rps / a.ghUid.rps).toFixed(2)}×, group search ${(b.ghGroup.rps / a.ghGroup.rps).toFixed(2)}× (slapd ${(b.slUid.rps / a.slUid.rps).toFixed(2)}×, ${(b.slGroup.rps / a.slGroup.rps).toFixed(2)}×)`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const sizes = arg('sizes', '1000,100000').split(',').map(Number);
  printLdap(await ldapFigures({ sizes, duration: Number(arg('duration', 5)), connections: Number(arg('connections', 8)) }));
}
