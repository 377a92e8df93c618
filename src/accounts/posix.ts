/**
 * What a Linux host sees of an account (contract section 25): its login name, numbers, home and
 * shell, and the rule of a login shell an account may be given.
 *
 * A username Gatehouse allows is not always a name Linux hosts take: `ann@contoso.com` (an `@`
 * is the domain separator of sssd's fully qualified names), `1234` (read as a uid number), a
 * name of more than 32 characters (utmp, `ps`). Such an account is not a POSIX account: the
 * directory serves its entry without posixAccount and its attributes, and no group lists it in
 * memberUid, so no host logs it in as someone else or by half; its apps still see it as before.
 * A new username that is a Linux name (`gatehouse user set-username`) gives it its login.
 *
 * Nor is an account named like a host's own system account (`root`, `ubuntu`, `postgres`…): a
 * host that finds such a name in its own /etc/passwd first would otherwise pair the directory's
 * SSH keys with its local account (sss_ssh_authorizedkeys looks keys up by name). The username
 * itself is not refused (apps may rely on it); the directory serves it as an ordinary person.
 */
import { AppError } from '../errors';

/** A login name hosts take: a lower-case letter or `_` first, then letters, digits, `.`, `_`, `-`; at most 32. */
export const LINUX_NAME = /^[a-z_][a-z0-9._-]{0,31}$/;

/**
 * Names of the accounts Linux distributions and cloud images make themselves (Debian's base-passwd,
 * systemd's, the default users of cloud images, common services), and every name starting with `_`
 * or `systemd-`: never served as a host login. docs/hosts.md lists them.
 */
// prettier-ignore
export const SYSTEM_ACCOUNT_NAMES: ReadonlySet<string> = new Set([
  'root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy', 'www-data', 'backup', 'list', 'irc',
  'gnats', 'nobody', 'nogroup', 'adm', 'admin', 'operator', 'halt', 'shutdown', 'ftp', 'messagebus', 'sshd', 'syslog', 'dnsmasq',
  'polkitd', 'avahi', 'uuidd', 'tss', 'tcpdump', 'landscape', 'pollinate', 'lxd', 'ntp', 'chrony', 'sssd', 'ubuntu', 'debian',
  'ec2-user', 'centos', 'fedora', 'rocky', 'almalinux', 'cloud-user', 'cloudsdk', 'vagrant', 'postgres', 'mysql', 'redis',
  'nginx', 'apache', 'http', 'git', 'docker',
]);

/** A name hosts take as a login from the directory: a Linux name, and none of their own system accounts'. */
export function isHostLogin(username: string): boolean {
  return LINUX_NAME.test(username) && !SYSTEM_ACCOUNT_NAMES.has(username) && !username.startsWith('_') && !username.startsWith('systemd-');
}

export const DEFAULT_SHELL = '/bin/bash';

/** The POSIX side of a person: null when the username is no host login (isHostLogin) or no number was given. */
export interface PosixAccount {
  uidNumber: number;
  /** The person's user-private group: their own number. */
  gidNumber: number;
  homeDirectory: string;
  loginShell: string;
}

export function posixAccount(username: string, posixId: number | null, shell: string | null): PosixAccount | null {
  if (posixId === null || !isHostLogin(username)) return null;
  return { uidNumber: posixId, gidNumber: posixId, homeDirectory: `/home/${username}`, loginShell: shell ?? DEFAULT_SHELL };
}

/**
 * A login shell as given: an absolute path of plain path characters (as /etc/shells lists them),
 * no `.` or `..` component, at most 200 characters; else a clear refusal.
 */
export function parseShell(raw: unknown): string {
  if (typeof raw !== 'string') throw new AppError('invalid_input', '{--shell} must be a string');
  const shell = raw.trim();
  if (!shell.startsWith('/'))
    throw new AppError('invalid_input', `{--shell} must be an absolute path, such as /bin/bash or /usr/bin/zsh (got "${shell.slice(0, 60)}")`);
  if (shell.length > 200) throw new AppError('invalid_input', '{--shell} is at most 200 characters');
  if (!/^(\/[A-Za-z0-9._+-]+)+$/.test(shell)) {
    throw new AppError(
      'invalid_input',
      '{--shell} is a path of letters, digits and . _ + - between slashes, with no space, no empty part and no slash at the end',
    );
  }
  if (shell.split('/').some((part) => part === '.' || part === '..')) throw new AppError('invalid_input', '{--shell} may not hold a . or .. part');
  return shell;
}
