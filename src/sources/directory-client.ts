/**
 * Talking to a source directory (LDAP or Active Directory), over ldapts (sync.ts syncs from it;
 * a synced person's password is checked with it at sign-in, through checkPasswordAtSource): a connection that is
 * LDAPS or StartTLS with the certificate verified (plain ldap:// only on this machine's loopback),
 * bounded in time and in bytes; reading every person and group under the base; and checking a
 * person's password by a bind as that person. Referrals are never followed.
 *
 * Nothing a directory sends is trusted beyond its own entries: values are checked where they are
 * used (sync.ts), filters are built with every value escaped (RFC 4515), and a reply larger than
 * the cap ends the connection rather than the server's memory.
 */
import net from 'node:net';
import type tls from 'node:tls';
import { AppError } from '../errors';
import type { SourceRow } from '../store/sources';

/** What the client needs of a directory source: the stored row's connection fields (a new source's, before it is stored, too). */
export type DirectoryTarget = Pick<
  SourceRow,
  'name' | 'url' | 'start_tls' | 'ca_certificate' | 'bind_dn' | 'bind_password' | 'base_dn' | 'user_filter' | 'id_attribute'
>;

/** One entry as read: its DN and each asked attribute's values (lower-case attribute names). */
export interface DirectoryEntry {
  dn: string;
  values: Map<string, Array<string | Buffer>>;
}

/** At most this many bytes from the directory per connection (a sync of 100,000 people is well below). */
export const MAX_DIRECTORY_BYTES = 256 * 1024 * 1024;
/** At most this many entries of one kind (people or groups). */
export const MAX_ENTRIES = 500_000;
const CONNECT_TIMEOUT_MS = 5_000;
const SYNC_TIMEOUT_MS = 60_000;
const SIGNIN_TIMEOUT_MS = 10_000;

/** Control characters: never in a DN, a filter or a name shown from a directory. */
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f]/g;

const LOOPBACK = new Set(['127.0.0.1', '::1', '[::1]', 'localhost']);

/** The URL as a source accepts it: ldaps://, or ldap:// with StartTLS, or ldap:// to this machine. */
export function parseSourceUrl(raw: string, startTls: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('invalid_input', `${raw.slice(0, 100)} is not a URL (ldaps://host[:port] or ldap://host[:port])`);
  }
  if (url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') throw new AppError('invalid_input', 'the URL must be ldaps://… or ldap://…');
  if (url.username || url.password || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    throw new AppError('invalid_input', 'the URL names only the directory: ldaps://host[:port] (the base DN is {--base-dn})');
  }
  if (url.protocol === 'ldaps:' && startTls) throw new AppError('invalid_input', '{--start-tls} is for ldap:// URLs (ldaps:// is TLS already)');
  if (url.protocol === 'ldap:' && !startTls && !LOOPBACK.has(url.hostname)) {
    throw new AppError('invalid_input', 'passwords would cross the network in clear: use ldaps://, or ldap:// with {--start-tls}');
  }
  return `${url.protocol}//${url.host}`;
}

/** RFC 4515: a value inside a filter, with `*`, `(`, `)`, `\` and NUL escaped (bytes: every one). */
export function filterValue(value: string | Buffer): string {
  if (Buffer.isBuffer(value)) return [...value].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** An Active Directory objectGUID as its usual text (the first three fields little-endian). */
export function guidText(bytes: Buffer): string {
  if (bytes.length !== 16) return bytes.toString('hex');
  const h = (i: number) => bytes[i].toString(16).padStart(2, '0');
  const part = (idx: number[]) => idx.map(h).join('');
  return [part([3, 2, 1, 0]), part([5, 4]), part([7, 6]), part([8, 9]), part([10, 11, 12, 13, 14, 15])].join('-');
}

/** The bytes of an objectGUID from its text (guidText's inverse). */
export function guidBytes(text: string): Buffer | null {
  const hex = text.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) return null;
  const b = Buffer.from(hex, 'hex');
  return Buffer.from([b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], ...b.subarray(8)]);
}

const binaryId = (source: Pick<DirectoryTarget, 'id_attribute'>) => source.id_attribute.toLowerCase() === 'objectguid';

/** The entry's id as text (entryUUID as given, objectGUID formatted), or null when it has none. */
export function entryIdOf(source: Pick<DirectoryTarget, 'id_attribute'>, entry: DirectoryEntry): string | null {
  const [value] = entry.values.get(source.id_attribute.toLowerCase()) ?? [];
  if (value === undefined) return null;
  if (binaryId(source)) return Buffer.isBuffer(value) ? guidText(value) : null;
  const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
  return /^[\x21-\x7e]{1,100}$/.test(text) ? text.toLowerCase() : null;
}

/** A source's filter for one entry by its id. */
function idFilter(source: Pick<DirectoryTarget, 'id_attribute'>, entryId: string): string | null {
  if (binaryId(source)) {
    const bytes = guidBytes(entryId);
    return bytes ? `(${source.id_attribute}=${filterValue(bytes)})` : null;
  }
  return `(${source.id_attribute}=${filterValue(entryId)})`;
}

type Ldapts = typeof import('ldapts');

/** A connection's socket, ended once the directory has sent more than the cap. */
function capped<T extends net.Socket>(socket: T): T {
  let received = 0;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > MAX_DIRECTORY_BYTES) socket.destroy(new Error('the directory sent more than the cap'));
  });
  return socket;
}

/** An open, bound connection to the source's directory; `close()` always. */
export class DirectoryConnection {
  private constructor(
    private readonly client: InstanceType<Ldapts['Client']>,
    private readonly lib: Ldapts,
  ) {}

  static async open(source: DirectoryTarget, purpose: 'sync' | 'signin'): Promise<DirectoryConnection> {
    const lib = await import('ldapts');
    const url = new URL(source.url);
    const tlsOptions: tls.ConnectionOptions = {
      rejectUnauthorized: true,
      // The name the certificate must carry (StartTLS upgrades a socket, which has no host of its own).
      host: url.hostname.replace(/^\[|\]$/g, ''),
      servername: net.isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname,
      ...(source.ca_certificate ? { ca: [source.ca_certificate] } : {}),
      minVersion: 'TLSv1.2',
    };
    const client = new lib.Client({
      url: source.url,
      connectTimeout: CONNECT_TIMEOUT_MS,
      timeout: purpose === 'sync' ? SYNC_TIMEOUT_MS : SIGNIN_TIMEOUT_MS,
      // Only for ldaps:// (ldapts would speak TLS from the first byte on ldap:// too); StartTLS gets them below.
      ...(url.protocol === 'ldaps:' ? { tlsOptions } : {}),
      strictDN: false,
      createConnection: ((...args: Parameters<typeof net.connect>) => capped(net.connect(...args))) as typeof net.connect,
      // node:tls loaded here, not at start: an admin command or a server without directory sources never needs it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      createSecureConnection: ((...args: Parameters<typeof tls.connect>) => capped((require('node:tls') as typeof tls).connect(...args))) as typeof tls.connect,
    });
    const connection = new DirectoryConnection(client, lib);
    try {
      if (source.start_tls) await client.startTLS(tlsOptions);
      await client.bind(source.bind_dn, source.bind_password);
    } catch (err) {
      await connection.close();
      throw unreachable(source, err);
    }
    return connection;
  }

  /** Every entry under the base that the filter matches, page by page (referrals are not followed). */
  async all(source: DirectoryTarget, filter: string, attributes: string[]): Promise<DirectoryEntry[]> {
    const out: DirectoryEntry[] = [];
    try {
      const pages = this.client.searchPaginated(source.base_dn, {
        scope: 'sub',
        filter,
        attributes,
        paged: { pageSize: 500 },
        derefAliases: 'never',
        explicitBufferAttributes: binaryId(source) ? [source.id_attribute] : [],
      });
      for await (const page of pages) {
        for (const e of page.searchEntries) {
          out.push(entryOf(e, attributes));
          if (out.length > MAX_ENTRIES) throw new AppError('invalid_input', `the directory answered more than ${MAX_ENTRIES} entries`);
        }
      }
    } catch (err) {
      throw unreachable(source, err);
    }
    return out;
  }

  /**
   * Checks a person's password by binding as them: found by their id (their DN may have moved
   * since the last sync). 'wrong' for a refused bind, 'gone' when the directory no longer has them.
   */
  async checkPassword(source: DirectoryTarget, entryId: string, password: string): Promise<'ok' | 'wrong' | 'gone'> {
    // An empty password would be an unauthenticated bind, which a directory answers with success;
    // one holding NUL is the same to a directory that reads it as a C string.
    if (password === '' || password.includes('\0')) return 'wrong';
    const filter = idFilter(source, entryId);
    if (filter === null) return 'gone';
    let dn: string;
    try {
      const found = await this.client.search(source.base_dn, { scope: 'sub', filter: `(&${source.user_filter}${filter})`, attributes: ['1.1'], sizeLimit: 2 });
      if (found.searchEntries.length !== 1) return 'gone';
      dn = found.searchEntries[0].dn;
    } catch (err) {
      throw unreachable(source, err);
    }
    try {
      await this.client.bind(dn, password);
      return 'ok';
    } catch (err) {
      if (err instanceof this.lib.InvalidCredentialsError) return 'wrong';
      throw unreachable(source, err);
    }
  }

  async close(): Promise<void> {
    await this.client.unbind().catch(() => undefined); // reason: a connection the directory already closed has nothing to end
  }
}

/** An entry's asked attributes (a directory may send others: they are not kept). */
function entryOf(e: Record<string, unknown> & { dn: string }, asked: readonly string[]): DirectoryEntry {
  const wanted = new Set(asked.map((a) => a.toLowerCase()));
  const values = new Map<string, Array<string | Buffer>>();
  for (const [key, value] of Object.entries(e)) {
    if (key === 'dn' || !wanted.has(key.toLowerCase())) continue;
    const list = Array.isArray(value) ? value : [value];
    values.set(key.toLowerCase(), list as Array<string | Buffer>);
  }
  return { dn: e.dn, values };
}

/** A directory that cannot be reached or refused the source's own bind: said without its reply's text. */
function unreachable(source: Pick<DirectoryTarget, 'name'>, err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { name?: string; code?: string | number };
  // ldapts names each LDAP result (NoSuchObjectError, SizeLimitExceededError…); a socket error has a code.
  const said: Record<string, string> = {
    InvalidCredentialsError: 'the source’s bind DN or password was refused',
    NoSuchObjectError: 'the base DN does not exist',
    InsufficientAccessError: 'the bind DN may not read there',
    ConfidentialityRequiredError: 'the directory asks for TLS',
  };
  const named = e.name && e.name !== 'Error' ? e.name : undefined;
  const why =
    (named && said[named]) ??
    (typeof e.code === 'string' ? e.code : (named?.replace(/Error$/, '') ?? (e.code !== undefined ? `LDAP result ${e.code}` : 'no answer')));
  return new AppError('unavailable', `the directory of the source ${source.name} cannot be used now (${String(why).slice(0, 80)})`);
}

/**
 * A synced person's password, checked by a bind at their source's directory (one connection, closed
 * after). The core hands it to the accounts' sign-in as Services.directoryPasswords: the sources
 * domain sits above the accounts (a sync writes through their use cases), so accounts never import it.
 */
export async function checkPasswordAtSource(source: DirectoryTarget, entryId: string, password: string): Promise<'ok' | 'wrong' | 'gone'> {
  const connection = await DirectoryConnection.open(source, 'signin');
  try {
    return await connection.checkPassword(source, entryId, password);
  } finally {
    await connection.close();
  }
}
