// docs/hosts.md's sssd recipe, run as written against Debian's sssd 2.8 in a private mount
// namespace (unshare -m): the test's sssd.conf, /var/lib/sss and nsswitch.conf (and a PAM service
// with pam_sss, as Debian's pam-auth-update writes it) bound over the machine's, so nothing of the
// machine changes. getent, id (groups through nesting), sss_ssh_authorizedkeys and pamtester (a
// password and an app password; someone outside the login group refused at account management; a
// disabled account no longer authenticates), with the rfc2307bis and the rfc2307 schema.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ANN_PW, block, host, setUp, type Host } from './hosts-helpers';

/** One run of sssd in a namespace of its own: its outputs by step name (`out` and `rc`). */
async function inNamespace(
  h: Host,
  conf: string,
  steps: Array<[name: string, line: string, stdin?: string]>,
): Promise<Map<string, { out: string; rc: number }>> {
  const root = fs.mkdtempSync(path.join(h.dir, 'sss-'));
  const etc = path.join(root, 'etc-sssd');
  fs.mkdirSync(etc);
  fs.writeFileSync(path.join(etc, 'sssd.conf'), conf, { mode: 0o600 });
  fs.copyFileSync(h.cert, path.join(etc, 'gatehouse-ca.pem'));
  fs.writeFileSync(path.join(root, 'nsswitch.conf'), 'passwd: files sss\ngroup: files sss\nshadow: files sss\n');
  // The doc's AuthorizedKeysCommand, installed as it says; a local account cy (uid 1500) beside the directory's cy.
  fs.writeFileSync(path.join(root, 'gatehouse-authorized-keys'), block('authorized-keys-command') + '\n');
  fs.writeFileSync(path.join(root, 'passwd'), fs.readFileSync('/etc/passwd', 'utf8') + 'cy:x:1500:1500:Local cy:/nonexistent:/usr/sbin/nologin\n', {
    mode: 0o644,
  });
  fs.mkdirSync(path.join(root, 'pam.d'));
  // What pam-auth-update gives Debian's login service with libpam-sss, for sss accounts only.
  fs.writeFileSync(path.join(root, 'pam.d', 'login'), 'auth required pam_sss.so\naccount required pam_sss.so\n');
  const lines = [
    'set -u',
    `R=${root}`,
    'mkdir -p $R/lib/db $R/lib/pipes/private $R/lib/mc $R/lib/pubconf $R/lib/gpo_cache $R/log',
    'mount --bind $R/lib /var/lib/sss',
    'mount --bind $R/etc-sssd /etc/sssd',
    'mount --bind $R/nsswitch.conf /etc/nsswitch.conf',
    'mount --bind $R/passwd /etc/passwd',
    'mount -t tmpfs -o mode=0755 tmpfs /usr/local && mkdir -m 0755 /usr/local/libexec',
    'install -o root -g root -m 0755 $R/gatehouse-authorized-keys /usr/local/libexec/',
    'mount --bind $R/pam.d /etc/pam.d',
    'mkdir -p /var/log/sssd && mount --bind $R/log /var/log/sssd',
    'sssd -i --logger=files &',
    'SSSD=$!',
    'for i in $(seq 1 60); do getent passwd ann >/dev/null && break; sleep 0.5; done',
  ];
  steps.forEach(([name, line, stdin], i) => {
    if (stdin !== undefined) fs.writeFileSync(path.join(root, `in-${i}`), stdin + '\n');
    lines.push(`echo "=== ${name}"`, `${line} < ${stdin !== undefined ? `$R/in-${i}` : '/dev/null'} 2>&1`, 'echo "=== rc $?"');
  });
  lines.push('kill $SSSD; wait $SSSD 2>/dev/null; true');
  const script = path.join(root, 'run.sh');
  fs.writeFileSync(script, lines.join('\n') + '\n');
  const out = await new Promise<string>((resolve) =>
    execFile('unshare', ['-m', 'bash', script], { env: h.env, timeout: 120_000 }, (err, stdout, stderr) => resolve(`${stdout}${err ? `\n${stderr}` : ''}`)),
  );
  const found = new Map<string, { out: string; rc: number }>();
  for (const m of out.matchAll(/=== (.+)\n([\s\S]*?)=== rc (\d+)\n/g)) found.set(m[1], { out: m[2], rc: Number(m[3]) });
  if (found.size !== steps.length)
    throw new Error(`sssd's namespace said:\n${out}\n${fs.existsSync(path.join(root, 'log')) ? fs.readdirSync(path.join(root, 'log')).join(' ') : ''}`);
  return found;
}

/** The doc's sssd.conf for this test's directory and reader. */
const sssdConf = (h: Host, readerPassword: string) =>
  block('sssd-conf').replace('ldap://auth.example.com:3890', `ldap://127.0.0.1:${h.port}`).replace('THE-READER-APP-PASSWORD', readerPassword) + '\n';

t.test("docs/hosts.md's sssd recipe: getent, id through nesting, SSH keys, pamtester, a disabled account", async (t) => {
  const h = await host(t);
  const { readerPassword } = await setUp(t, h, 'sssd-gatehouse');
  // ann: a key, and an app password for the laptop; bo is in no group that may log in.
  const pub = path.join(h.dir, 'ann.pub');
  fs.writeFileSync(pub, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3/+bUL3vO5SYk1wD1s1QLdjVI1nOqGCqsRnCPsbdKx ann@laptop\n');
  t.equal((await h.gatehouse(['user', 'ssh-key', 'add', 'ann@example.com', pub])).code, 0);
  // cy: a directory person whose name is also a local account's on the server (not one the directory knows to leave out).
  t.equal((await h.gatehouse(['user', 'create', '--email', 'cy@example.com', '--password-stdin'], ANN_PW)).code, 0);
  const cyPub = path.join(h.dir, 'cy.pub');
  fs.writeFileSync(cyPub, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAtObepLYDKzKw1hkPnusp5iWdfqcJ4fu3PgFoD52RNf cy@attacker\n');
  t.equal((await h.gatehouse(['user', 'ssh-key', 'add', 'cy@example.com', cyPub])).code, 0);
  const app = await h.gatehouse(['--json', 'user', 'app-password', 'add', 'ann@example.com', '--name', 'laptop']);
  const annApp = JSON.parse(app.stdout).secret as string;

  const check = block('sssd-check').split('\n');
  t.same(check, ['getent passwd ann', 'id ann', 'sss_ssh_authorizedkeys ann', 'pamtester login ann authenticate acct_mgmt']);
  const sshd = block('sshd-config').split('\n');
  t.same(sshd, ['AuthorizedKeysCommand /usr/local/libexec/gatehouse-authorized-keys %u %U', 'AuthorizedKeysCommandUser nobody']);
  t.ok(fs.existsSync('/usr/bin/sss_ssh_authorizedkeys'), 'the command the wrapper runs exists');
  t.match(block('sssd-conf'), /^min_id = 10000$/m, 'sssd serves no number below the --posix-id-base');
  // What sshd runs (AuthorizedKeysCommand with %u and %U: the name and the number NSS gives it), as the user it names.
  const asSshd = (user: string, uid = `$(id -u ${user})`) =>
    `setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/local/libexec/gatehouse-authorized-keys ${user} ${uid}`;
  const found = await inNamespace(h, sssdConf(h, readerPassword), [
    ['getent', check[0]],
    ['id', check[1]],
    ['keys', check[2]],
    ['keys as sshd', asSshd('ann')],
    ['cy by name alone', 'sss_ssh_authorizedkeys cy'],
    ['cy local uid', 'id -u cy'],
    ['cy as sshd', asSshd('cy')],
    ['cy with the directory number', asSshd('cy', '$(getent -s sss passwd cy | cut -d: -f3)')],
    ['no arguments', 'setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/local/libexec/gatehouse-authorized-keys'],
    ['pam password', check[3], ANN_PW],
    ['pam app password', check[3], annApp],
    ['pam wrong', check[3], 'not her password'],
    ['bo', 'pamtester login bo authenticate acct_mgmt', ANN_PW],
    ['disable', `${h.exe} user disable ann@example.com`],
    ['pam disabled', check[3], ANN_PW],
    ['pam disabled app password', check[3], annApp],
  ]);
  const getent = found.get('getent')!;
  t.equal(getent.rc, 0, getent.out);
  const m = /^ann:\*:(\d+):(\d+):ann:\/home\/ann:\/bin\/bash$/m.exec(getent.out);
  t.ok(m, `getent passwd ann: ${getent.out}`);
  t.equal(m?.[1], m?.[2], "gidNumber: ann's own number");
  const id = found.get('id')!;
  t.match(id.out, new RegExp(`uid=${m?.[1]}\\(ann\\) gid=${m?.[1]}\\(ann\\)`), "id: ann's user-private group by her name (auto_private_groups)");
  t.match(id.out, /\(staff\)/, 'id: staff');
  t.match(id.out, /\(server-login\)/, 'id: server-login, through staff');
  t.equal(found.get('keys')!.out.trim(), fs.readFileSync(pub, 'utf8').trim(), 'sss_ssh_authorizedkeys: her key, comment kept');
  const keysAsSshd = found.get('keys as sshd')!;
  t.equal(keysAsSshd.rc, 0, keysAsSshd.out);
  t.equal(keysAsSshd.out.trim(), fs.readFileSync(pub, 'utf8').trim(), "the doc's AuthorizedKeysCommand as nobody: ann's key");
  // cy: sss_ssh_authorizedkeys alone hands the directory cy's key to the local cy; the wrapper does not.
  t.equal(found.get('cy by name alone')!.out.trim(), fs.readFileSync(cyPub, 'utf8').trim(), "by name alone: the directory cy's key");
  t.equal(found.get('cy local uid')!.out.trim(), '1500', 'NSS gives the local cy (files first)');
  const cyAsSshd = found.get('cy as sshd')!;
  t.equal(cyAsSshd.rc, 0, cyAsSshd.out);
  t.equal(cyAsSshd.out.trim(), '', 'the wrapper: no key for the local cy');
  t.equal(
    found.get('cy with the directory number')!.out.trim(),
    fs.readFileSync(cyPub, 'utf8').trim(),
    'the same wrapper with the number sssd serves: the key',
  );
  t.not(found.get('no arguments')!.rc, 0, 'without the name and number: refused');
  for (const step of ['pam password', 'pam app password']) {
    t.equal(found.get(step)!.rc, 0, `${step}: ${found.get(step)!.out}`);
    t.match(found.get(step)!.out, /successfully authenticated[\s\S]*account management done/);
  }
  t.not(found.get('pam wrong')!.rc, 0, 'a wrong password: refused');
  t.not(found.get('bo')!.rc, 0, 'bo is not in server-login');
  t.match(
    found.get('bo')!.out,
    /successfully authenticated[\s\S]*Permission denied|Permission denied[\s\S]*successfully authenticated/,
    'bo: authenticated, then refused by the access filter',
  );
  t.equal(found.get('disable')!.rc, 0);
  for (const step of ['pam disabled', 'pam disabled app password']) {
    t.not(found.get(step)!.rc, 0, `${step}: ${found.get(step)!.out}`);
    t.notMatch(found.get(step)!.out, /successfully authenticated/, `${step}: a disabled account no longer authenticates`);
  }
});

t.test('the same directory for an rfc2307 client (groups from memberUid, nested members listed)', async (t) => {
  const h = await host(t);
  const { readerPassword } = await setUp(t, h, 'sssd-gatehouse');
  const conf = sssdConf(h, readerPassword).replace('ldap_schema = rfc2307bis', 'ldap_schema = rfc2307');
  t.match(conf, /ldap_schema = rfc2307\n/);
  const found = await inNamespace(h, conf, [
    ['id', 'id ann'],
    ['pam', 'pamtester login ann authenticate acct_mgmt', ANN_PW],
  ]);
  t.match(found.get('id')!.out, /\(staff\)/);
  t.match(found.get('id')!.out, /\(server-login\)/, 'server-login through staff: memberUid lists nested members');
  t.equal(found.get('pam')!.rc, 0, found.get('pam')!.out);
});
