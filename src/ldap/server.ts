/**
 * The LDAP listener (contract section 15), a front end beside HTTP and the shell: it reads
 * requests (protocol.ts), asks the core's directory (binds through the sign-in home, reads of
 * people and groups) and answers from the tree (tree.ts). Read-only: writes answer
 * unwillingToPerform; compare is a read. Each connection handles one request at a time; a
 * malformed or oversize message, a client that reads nothing, an idle connection or too many
 * connections from one address end with a notice of disconnection, never with the server.
 *
 * Strangers get less than those who bound: a connection that has not bound may stay idle
 * seconds, not minutes, send smaller messages and filters, and holds one of a smaller share of
 * slots (the oldest stranger makes room for a new one), so unauthenticated clients cannot fill
 * the directory. A bound connection's identity is checked again before each request: a bind
 * ends when its account is disabled, signed out everywhere, given a new password or its app
 * password revoked. A connection reads no further than it has answered (a bounded number of
 * requests waiting, a bounded amount unread by the client): a client that pipelines and never
 * reads holds its own socket's buffers, not the server's memory.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Core, DirectoryIdentity, SearchOutcome } from '../core';
import { isAppError } from '../errors';
import type { Logger } from '../log';
import { decode, entry, extended, frame, MAX_FILTER_TERMS, MAX_MESSAGE, OID, OP, pagedDone, result, RESULT, type LdapFilter, type Request } from './protocol';
import { groupsHint, matches, peopleHint, select, Tree, type Entry } from './tree';

export interface LdapOptions {
  host: string;
  /** Plain LDAP (with StartTLS when a certificate is given), or null. */
  port: number | null;
  /** LDAP over TLS, or null. */
  tlsPort: number | null;
  /** PEM certificate chain and key for LDAPS and StartTLS, or null. */
  tls: { cert: string; key: string } | null;
  baseDn: string;
  /** Managed groups whose members may search (administrators always may). */
  readers: readonly string[];
  /** Allow a simple bind in clear text from an address other than loopback. */
  allowInsecureBind: boolean;
}

export interface LdapServer {
  /** The plain port and the TLS port actually bound (port 0 picks one), or null. */
  port: number | null;
  tlsPort: number | null;
  close(): Promise<void>;
}

const IDLE_MS = 5 * 60_000;
const PER_ADDRESS = 64;
const MAX_CONNECTIONS = 2048;
/** Connections that have not bound: idle seconds, not minutes; a few per address; a share of the slots. */
const UNBOUND_IDLE_MS = 10_000;
const UNBOUND_PER_ADDRESS = 8;
const MAX_UNBOUND = 256;
/** A message before a bind: a bind, StartTLS or a read of the root DSE needs little. */
const MAX_UNBOUND_MESSAGE = 64 * 1024;
/** Requests read and not yet answered on one connection: past this, reading waits. */
const MAX_PENDING = 64;
/** Answers the client has not read yet: past this, reading waits; far past it, the client is dropped. */
const HIGH_WATER = 256 * 1024;
const MAX_UNREAD = 4 * 1024 * 1024;
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** The slots of connections that have not bound, oldest first, and how many each address holds. */
class Strangers {
  private readonly all = new Set<Connection>();
  private readonly byAddress = new Map<string, number>();

  /** Whether this address may open one more connection that has not bound. */
  roomFor(address: string): boolean {
    return (this.byAddress.get(address) ?? 0) < UNBOUND_PER_ADDRESS;
  }

  add(c: Connection): void {
    if (this.all.has(c)) return;
    // The oldest stranger makes room: a flood of strangers recycles its own slots, never the bound ones.
    if (this.all.size >= MAX_UNBOUND) this.all.values().next().value?.evict();
    this.all.add(c);
    this.byAddress.set(c.address, (this.byAddress.get(c.address) ?? 0) + 1);
  }

  remove(c: Connection): void {
    if (!this.all.delete(c)) return;
    const left = (this.byAddress.get(c.address) ?? 1) - 1;
    if (left <= 0) this.byAddress.delete(c.address);
    else this.byAddress.set(c.address, left);
  }
}

export async function startLdap(core: Core, o: LdapOptions, logger: Logger): Promise<LdapServer> {
  const tree = new Tree(o.baseDn);
  const secure = o.tls ? tls.createSecureContext({ cert: o.tls.cert, key: o.tls.key, minVersion: 'TLSv1.2' }) : null;
  if (o.tlsPort !== null && !secure) throw new Error('LDAPS needs a certificate and key');
  const perAddress = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const strangers = new Strangers();
  const accept = (socket: net.Socket, encrypted: boolean) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = (perAddress.get(address) ?? 0) + 1;
    if (count > PER_ADDRESS || !strangers.roomFor(address) || sockets.size >= MAX_CONNECTIONS) {
      socket.end(extended(0, RESULT.busy, 'too many connections', { name: OID.noticeOfDisconnection }));
      socket.destroy();
      return;
    }
    perAddress.set(address, count);
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    const connection = new Connection(core, tree, o, logger, socket, address, encrypted, secure, strangers);
    socket.on('close', () => strangers.remove(connection));
    connection.start();
  };
  const servers: net.Server[] = [];
  const listen = async (server: net.Server, port: number) => {
    server.maxConnections = MAX_CONNECTIONS + 16;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    servers.push(server);
    return (server.address() as net.AddressInfo).port;
  };
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      let open = servers.length;
      if (open === 0) return resolve();
      for (const server of servers) server.close(() => --open === 0 && resolve());
    });
  try {
    const port =
      o.port === null
        ? null
        : await listen(
            net.createServer((socket) => accept(socket, false)),
            o.port,
          );
    // A TLS socket is a net.Socket: the handshake is over before a request is read.
    const tlsPort =
      o.tlsPort === null
        ? null
        : await listen(
            tls.createServer({ cert: o.tls!.cert, key: o.tls!.key, minVersion: 'TLSv1.2', handshakeTimeout: 10_000 }, (socket) => accept(socket, true)),
            o.tlsPort,
          );
    return { port, tlsPort, close };
  } catch (err) {
    await close();
    throw err;
  }
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  /** The connection's socket: the TCP one, or the TLS one over it after StartTLS. */
  private socket: net.Socket;
  /** The TCP socket (or LDAPS's from the start), which every byte passes through. */
  private readonly tcp: net.Socket;
  private identity: DirectoryIdentity | null = null;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  /** Requests read and not yet answered. */
  private pending = 0;
  /** StartTLS was read: nothing more is read until the handshake is over. */
  private upgrading = false;

  constructor(
    private readonly core: Core,
    private readonly tree: Tree,
    private readonly o: LdapOptions,
    private readonly logger: Logger,
    socket: net.Socket,
    readonly address: string,
    /** LDAPS from the start, or after StartTLS. */
    private encrypted: boolean,
    private readonly secure: tls.SecureContext | null,
    private readonly strangers: Strangers,
  ) {
    this.socket = socket;
    this.tcp = socket;
  }

  start(): void {
    // Answers go out at once: with Nagle's algorithm, a search's last message waited for the
    // client's delayed ACK of the one before (about 40 ms per search).
    this.socket.setNoDelay(true);
    // The idle timer is the TCP socket's, registered once (setBound only changes its length):
    // after StartTLS every byte still passes through it.
    this.tcp.on('timeout', () => this.drop(RESULT.unavailable, 'idle for too long'));
    this.setBound(false);
    this.listen(this.socket);
  }

  /** Bound or not: the idle time and the share of slots a connection gets. */
  private setBound(bound: boolean): void {
    if (bound) this.strangers.remove(this);
    else this.strangers.add(this);
    this.tcp.setTimeout(bound ? IDLE_MS : UNBOUND_IDLE_MS);
  }

  /** Made room for a newer connection that has not bound either. */
  evict(): void {
    this.strangers.remove(this);
    this.drop(RESULT.busy, 'too many connections that have not bound');
  }

  private listen(socket: net.Socket): void {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => this.pump());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => (this.closed = true));
  }

  /**
   * StartTLS (RFC 4513 3): answered in clear, then the same TCP connection carries TLS. Refused
   * on an encrypted connection, without a certificate, or with requests sent behind it: a request
   * that arrives before the handshake is over was sent in clear (and may be a man in the
   * middle's), so it ends the connection rather than being answered inside TLS.
   */
  private startTls(id: number): void {
    if (this.encrypted || !this.secure) {
      this.upgrading = false;
      this.send(
        this.encrypted
          ? extended(id, RESULT.operationsError, 'this connection is encrypted already')
          : extended(id, RESULT.protocolError, 'StartTLS is not offered: the server has no certificate'),
      );
      setImmediate(() => this.pump());
      return;
    }
    if (this.buffer.length > 0) return this.drop(RESULT.protocolError, 'requests sent after StartTLS before its answer');
    const plain = this.socket;
    plain.write(extended(id, RESULT.success, '', { name: OID.startTls }));
    plain.removeAllListeners('data');
    plain.removeAllListeners('drain');
    const secure = new tls.TLSSocket(plain, { isServer: true, secureContext: this.secure });
    this.socket = secure;
    secure.once('secure', () => {
      this.encrypted = true;
      this.upgrading = false;
      this.pump();
    });
    this.listen(secure);
  }

  private receive(chunk: Buffer): void {
    // Clear text after StartTLS and before its handshake: injected, or a confused client.
    if (this.upgrading) return this.drop(RESULT.protocolError, 'requests sent after StartTLS before its answer');
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    this.pump();
  }

  /** Reads the requests in the buffer, as far as the connection may have waiting; the rest waits in the socket. */
  private pump(): void {
    while (!this.closed && !this.upgrading) {
      if (this.pending >= MAX_PENDING || this.socket.writableLength >= HIGH_WATER) {
        this.socket.pause();
        return;
      }
      const bound = this.identity !== null;
      const f = frame(this.buffer, bound ? MAX_MESSAGE : MAX_UNBOUND_MESSAGE);
      if ('incomplete' in f) break;
      if ('error' in f) return this.drop(RESULT.protocolError, bound ? f.error : `${f.error} before a bind`);
      this.buffer = f.rest;
      let request: Request;
      try {
        request = decode(f.message, bound ? MAX_FILTER_TERMS.bound : MAX_FILTER_TERMS.unbound);
      } catch (err) {
        return this.drop(RESULT.protocolError, `a malformed request (${(err as Error).message.slice(0, 80)})`);
      }
      if (request.kind === 'unbind') {
        this.closed = true;
        this.socket.end();
        return;
      }
      if (request.kind === 'extended' && request.oid === OID.startTls) this.upgrading = true;
      this.pending++;
      this.queue = this.queue
        .then(() => this.handle(request))
        .catch((err: unknown) => this.failed(request, err))
        .finally(() => {
          this.pending--;
          if (this.pending <= MAX_PENDING / 2) this.pump();
        });
    }
    if (this.socket.isPaused()) this.socket.resume();
  }

  /** Ends the connection with a notice of disconnection (RFC 4511 4.4.1). */
  private drop(code: number, why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.logger.info('ldap_disconnected', { client: this.address, reason: why });
    this.socket.end(extended(0, code, why, { name: OID.noticeOfDisconnection }));
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private send(bytes: Buffer): void {
    if (this.closed) return;
    this.socket.write(bytes);
    if (this.socket.writableLength > MAX_UNREAD) {
      this.closed = true;
      this.socket.destroy();
    }
  }

  /**
   * Whether the bind still holds, read before each request that uses it; when it does not, the
   * connection ends with a notice (strongerAuthRequired: the association is no longer valid).
   */
  private async stillBound(): Promise<boolean> {
    if (this.identity === null) return true;
    const now = await this.core.directory.stillBound(this.identity, this.o.readers);
    if (now !== null) {
      this.identity = now;
      return true;
    }
    this.identity = null;
    this.drop(
      RESULT.strongerAuthRequired,
      'the bound account changed (disabled, signed out everywhere, a new password or its app password revoked): bind again',
    );
    return false;
  }

  private failed(request: Request, err: unknown): void {
    const code = isAppError(err) && err.code === 'unavailable' ? RESULT.unavailable : RESULT.other;
    if (request.kind === 'search') this.core.directory.searched('failed');
    if (!isAppError(err)) this.logger.error('ldap_request_failed', { client: this.address, kind: request.kind, error: (err as Error)?.name ?? 'error' });
    const op = { bind: OP.bindResponse, search: OP.searchDone, compare: OP.compareResponse }[request.kind as string] ?? OP.extendedResponse;
    this.send(
      request.kind === 'extended'
        ? extended(request.id, code, 'the directory could not answer')
        : result(request.id, op, code, 'the directory could not answer'),
    );
  }

  private async handle(r: Request): Promise<void> {
    if (this.closed) return;
    if ((r.kind === 'search' || r.kind === 'compare' || r.kind === 'extended') && !(await this.stillBound())) return;
    switch (r.kind) {
      case 'bind':
        return this.bind(r);
      case 'search':
        return this.search(r);
      case 'compare':
        return this.compare(r);
      case 'extended':
        if (r.oid === OID.whoAmI)
          return this.send(extended(r.id, RESULT.success, '', { value: this.identity ? `dn:${this.tree.personDn(this.identity.username)}` : '' }));
        if (r.oid === OID.startTls) return this.startTls(r.id);
        return this.send(extended(r.id, RESULT.protocolError, `unknown extended operation ${r.oid.slice(0, 60)}`));
      case 'write':
        return this.send(result(r.id, r.response, RESULT.unwillingToPerform, 'the directory is read-only: change accounts and groups in Gatehouse'));
      case 'abandon':
        return;
      case 'unknown':
        return this.drop(RESULT.protocolError, `an unknown operation 0x${r.tag.toString(16)}`);
      default:
        return;
    }
  }

  private async bind(r: Extract<Request, { kind: 'bind' }>): Promise<void> {
    if (this.identity !== null) this.setBound(false);
    this.identity = null;
    if (r.version !== 3) return this.send(result(r.id, OP.bindResponse, RESULT.protocolError, 'LDAP version 3 only'));
    if (r.dn === '' && r.password === '') return this.send(result(r.id, OP.bindResponse, RESULT.success));
    if (r.password === '')
      return this.send(result(r.id, OP.bindResponse, RESULT.unwillingToPerform, 'an unauthenticated bind (a DN without a password) is refused'));
    if (!this.encrypted && !this.o.allowInsecureBind && !LOOPBACK.test(this.address)) {
      return this.send(result(r.id, OP.bindResponse, RESULT.confidentialityRequired, 'a password in clear text: use LDAPS or StartTLS'));
    }
    const at = this.tree.locate(r.dn);
    const username = at && at.at === 'person' ? at.name : '';
    try {
      this.identity = await this.core.directory.bind({ token: null, client: this.address, userAgent: null }, username, r.password, this.o.readers);
    } catch (err) {
      if (isAppError(err) && err.code === 'unavailable') throw err;
      // Every failure alike: unknown DN, wrong password, a locked account, a disabled one.
      return this.send(result(r.id, OP.bindResponse, RESULT.invalidCredentials, 'invalid credentials'));
    }
    this.setBound(true);
    this.send(result(r.id, OP.bindResponse, RESULT.success));
  }

  private async search(r: Extract<Request, { kind: 'search' }>): Promise<void> {
    const { search } = r;
    const done = (code: number, text = '', matched = '', controls?: Parameters<typeof result>[5]) => {
      this.core.directory.searched(outcomeOf(code));
      this.send(result(r.id, OP.searchDone, code, text, matched, controls));
    };
    if (r.criticalUnknown) return done(RESULT.unavailableCriticalExtension, 'a critical control this directory does not support');
    if ('refused' in search.filter) return done(RESULT.unwillingToPerform, search.filter.refused);
    const filter = search.filter;
    const at = this.tree.locate(search.baseDN);
    if (at === null) return done(RESULT.invalidDNSyntax, 'the base is not a DN');
    if (at.at === 'root' && search.scope === 'base') {
      const dse = this.tree.rootDse(this.secure ? [OID.whoAmI, OID.startTls] : [OID.whoAmI], [OID.pagedResults]);
      if (matches(filter, dse)) this.send(entry(r.id, '', select(dse, search.attributes.length ? search.attributes : ['*', '+'], search.typesOnly)));
      return done(RESULT.success);
    }
    if (at.at === 'unknown') return done(RESULT.noSuchObject, 'no such entry', at.matched);
    if (at.at === 'root') return done(RESULT.noSuchObject, `the directory's base is ${this.tree.base}`);
    if (!this.identity) return done(RESULT.insufficientAccessRights, 'bind first');
    const entries = await this.candidates(at, search.scope, filter, search.attributes);
    if (entries === null) return done(RESULT.noSuchObject, 'no such entry', at.at === 'person' ? this.tree.people : this.tree.groups);
    const found = entries.filter((e) => matches(filter, e));
    // Paged results (RFC 2696): the cookie is the offset of the next page.
    let start = 0;
    let end = found.length;
    let next: Buffer | null = null;
    if (r.paged) {
      const size = r.paged.value?.size ?? 0;
      const cookie = r.paged.value?.cookie;
      start = cookie && cookie.length ? Number(cookie.toString('utf8')) || 0 : 0;
      end = size > 0 ? Math.min(found.length, start + size) : found.length;
      next = Buffer.from(end < found.length ? String(end) : '', 'utf8');
    }
    const limit = search.sizeLimit > 0 ? search.sizeLimit : Infinity;
    let sent = 0;
    // The entries and the result leave in as few packets as they fit.
    const socket = this.socket;
    socket.cork();
    try {
      for (const e of found.slice(start, end)) {
        if (sent >= limit) return done(RESULT.sizeLimitExceeded, `more than ${search.sizeLimit} entries`);
        this.send(entry(r.id, e.dn, select(e, search.attributes, search.typesOnly)));
        sent++;
      }
      done(RESULT.success, '', '', next ? pagedDone(next) : undefined);
    } finally {
      socket.uncork();
    }
  }

  /**
   * Compare (RFC 4511 4.10): does the entry hold this value? Read as a base search of the entry,
   * with the same rules: bound first, and only what the identity may see.
   */
  private async compare(r: Extract<Request, { kind: 'compare' }>): Promise<void> {
    const done = (code: number, text = '', matched = '') => this.send(result(r.id, OP.compareResponse, code, text, matched));
    const at = this.tree.locate(r.dn);
    if (at === null) return done(RESULT.invalidDNSyntax, 'the entry is not a DN');
    if (at.at === 'unknown') return done(RESULT.noSuchObject, 'no such entry', at.matched);
    if (at.at === 'root') return done(RESULT.noSuchObject, `the directory's base is ${this.tree.base}`);
    if (!this.identity) return done(RESULT.insufficientAccessRights, 'bind first');
    const [found] = (await this.candidates(at, 'base', { present: 'objectclass' })) ?? [];
    if (!found) return done(RESULT.noSuchObject, 'no such entry', at.at === 'person' ? this.tree.people : this.tree.groups);
    if (!matches({ present: r.attribute }, found)) return done(RESULT.noSuchAttribute, `the entry has no ${r.attribute.slice(0, 60)}`);
    done(matches({ compare: 'eq', attribute: r.attribute, value: r.value }, found) ? RESULT.compareTrue : RESULT.compareFalse);
  }

  /** The entries in scope of a search, in DN order; null when the base names an entry that does not exist. */
  private async candidates(
    at: Exclude<ReturnType<Tree['locate']>, null>,
    scope: string,
    filter: LdapFilter,
    attributes: readonly string[] = ['*'],
  ): Promise<Entry[] | null> {
    const identity = this.identity!;
    const dir = this.core.directory;
    const people = async () => (await dir.people(identity, peopleHint(filter, this.tree))).map((p) => this.tree.person(p));
    const groups = async () => (await dir.groups(identity, groupsHint(filter, attributes, this.tree))).map((g) => this.tree.group(g));
    switch (at.at) {
      case 'base':
        if (scope === 'base') return [this.tree.baseEntry()];
        if (scope === 'one') return [this.tree.ou('people'), this.tree.ou('groups')];
        return [this.tree.baseEntry(), this.tree.ou('people'), ...(await people()), this.tree.ou('groups'), ...(await groups())];
      case 'people':
        return scope === 'base' ? [this.tree.ou('people')] : [...(scope === 'one' ? [] : [this.tree.ou('people')]), ...(await people())];
      case 'groups':
        return scope === 'base' ? [this.tree.ou('groups')] : [...(scope === 'one' ? [] : [this.tree.ou('groups')]), ...(await groups())];
      case 'person': {
        const found = await dir.people(identity, { username: at.name });
        if (found.length === 0) return null;
        return scope === 'one' ? [] : [this.tree.person(found[0])];
      }
      case 'group': {
        const found = await dir.groups(identity, { name: at.name });
        if (found.length === 0) return null;
        return scope === 'one' ? [] : [this.tree.group(found[0])];
      }
      default:
        return [];
    }
  }
}

/** A search's result code as a /metrics outcome. */
function outcomeOf(code: number): SearchOutcome {
  if (code === RESULT.success || code === RESULT.sizeLimitExceeded) return 'ok';
  if (code === RESULT.noSuchObject || code === RESULT.invalidDNSyntax) return 'not_found';
  return 'refused';
}

/** The base DN when none is given: the dc= parts of the public URL's domain (auth.example.com → dc=example,dc=com). */
export function defaultBaseDn(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$/.test(host) || host.includes(':')) return 'dc=gatehouse';
  const labels = host.split('.').filter(Boolean);
  const domain = labels.length > 2 ? labels.slice(-2) : labels;
  return domain.map((l) => `dc=${l}`).join(',');
}
