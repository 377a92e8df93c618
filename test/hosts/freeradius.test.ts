// docs/hosts.md's FreeRADIUS recipe, run as written: Debian's FreeRADIUS 3.2 with its LDAP module
// (a copy of /etc/freeradius/3.0 with the doc's ldap module, virtual server and client, on a free
// port, in the foreground), checked with radtest: an app password of a person in the `wifi` group
// (through nesting) is accepted; a wrong password, a revoked app password, someone outside the
// group and a disabled account are rejected.
import { execFile, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { block, host, setUp } from './hosts-helpers';

/** A free UDP port on 127.0.0.1. */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const radtest = (line: string) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile('bash', ['-c', line], { timeout: 30_000 }, (err, out, errOut) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${out}${errOut}` }),
    ),
  );

t.test("docs/hosts.md's FreeRADIUS recipe: PAP through a bind with an app password", async (t) => {
  const h = await host(t);
  const { readerPassword } = await setUp(t, h, 'sssd-gatehouse');
  for (const line of block('freeradius-gatehouse').split('\n')) t.equal((await h.sh(line)).code, 0, line);
  const wifi = async (email: string) =>
    JSON.parse((await h.gatehouse(['--json', 'user', 'app-password', 'add', email, '--name', 'wifi'])).stdout) as {
      secret: string;
      app_password: { id: string };
    };
  const ann = await wifi('ann@example.com');
  const bo = await wifi('bo@example.com');

  // The configuration: Debian's, with the doc's module, site and client in place of its own.
  const raddb = path.join(h.dir, 'raddb');
  fs.cpSync('/etc/freeradius/3.0', raddb, { recursive: true, dereference: false });
  for (const d of ['sites-enabled', 'mods-enabled']) for (const f of fs.readdirSync(path.join(raddb, d))) fs.rmSync(path.join(raddb, d, f));
  fs.copyFileSync(h.cert, path.join(raddb, 'gatehouse-ca.pem'));
  const port = await freeUdpPort();
  const ldap = block('freeradius-ldap')
    .replace('ldap://auth.example.com:3890', `ldap://127.0.0.1:${h.port}`)
    .replace('THE-READER-APP-PASSWORD', readerPassword);
  fs.writeFileSync(path.join(raddb, 'mods-enabled', 'ldap'), ldap + '\n');
  const site = block('freeradius-site').replace('ipaddr = *', 'ipaddr = 127.0.0.1').replace('port = 1812', `port = ${port}`);
  fs.writeFileSync(path.join(raddb, 'sites-enabled', 'gatehouse'), site + '\n');
  const clients = block('freeradius-clients').replace('ipaddr = 192.0.2.10', 'ipaddr = 127.0.0.1');
  fs.writeFileSync(path.join(raddb, 'clients.conf'), clients + '\n');
  // Run as the test's user (Debian's radiusd.conf switches to freerad, who may not read the test's folder).
  const conf = path.join(raddb, 'radiusd.conf');
  fs.writeFileSync(conf, fs.readFileSync(conf, 'utf8').replace(/^(\s*)(user|group) = freerad/gm, '$1# $2 = freerad'));
  const radiusd = spawn('freeradius', ['-f', '-l', 'stdout', '-d', raddb, '-n', 'radiusd'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  radiusd.stdout.on('data', (d) => (log += d));
  radiusd.stderr.on('data', (d) => (log += d));
  t.teardown(() => {
    try {
      process.kill(-radiusd.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  });
  for (let i = 0; i < 100 && !log.includes('Ready to process requests'); i++) {
    if (radiusd.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.match(log, /Ready to process requests/, log.slice(-2000));

  const check = block('freeradius-check');
  const as = (user: string, password: string) =>
    radtest(check.replace('radtest ann THE-WIFI-APP-PASSWORD', `radtest ${user} '${password}'`).replace('192.0.2.1:1812', `127.0.0.1:${port}`));
  const accepted = await as('ann', ann.secret);
  t.match(accepted.out, /Received Access-Accept/, `ann's Wi-Fi app password: ${accepted.out}`);
  t.match((await as('ann', 'not her password')).out, /Received Access-Reject/, 'a wrong password');
  t.match((await as('bo', bo.secret)).out, /Received Access-Reject/, 'bo is not in wifi');
  t.match((await as('nobody', 'any password at all')).out, /Received Access-Reject/, 'no such person');

  t.equal((await h.gatehouse(['user', 'app-password', 'revoke', 'ann@example.com', ann.app_password.id])).code, 0);
  t.match((await as('ann', ann.secret)).out, /Received Access-Reject/, 'a revoked app password');
  const again = await wifi('ann@example.com');
  t.match((await as('ann', again.secret)).out, /Received Access-Accept/, 'a new one');
  t.equal((await h.gatehouse(['user', 'disable', 'ann@example.com'])).code, 0);
  t.match((await as('ann', again.secret)).out, /Received Access-Reject/, 'a disabled account');
});
