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
 *
 * Here: the listeners and who may connect. One connection: connection.ts; binds: bind.ts;
 * searches and compares: search.ts; the limits: limits.ts; the strangers' slots: strangers.ts.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Core } from '../core';
import type { Logger } from '../log';
import { extended, OID, RESULT } from './protocol';
import { Tree } from './tree';
import { Connection } from './connection';
import { Strangers } from './strangers';
import { MAX_CONNECTIONS, PER_ADDRESS, SEARCHES_AT_ONCE } from './limits';
import { Semaphore } from '../core';
import type { LdapOptions, LdapServer } from './options';

export type { LdapOptions, LdapServer } from './options';

/** The connections open now, and how many each address holds. */
interface Open {
  readonly sockets: Set<net.Socket>;
  readonly perAddress: Map<string, number>;
  readonly strangers: Strangers;
  /** Searches reading and testing entries now, over every connection. */
  readonly searches: Semaphore;
}

export async function startLdap(core: Core, o: LdapOptions, logger: Logger): Promise<LdapServer> {
  const tree = new Tree(o.baseDn);
  const secure = o.tls ? tls.createSecureContext({ cert: o.tls.cert, key: o.tls.key, minVersion: 'TLSv1.2' }) : null;
  if (o.tlsPort !== null && !secure) throw new Error('LDAPS needs a certificate and key');
  const open: Open = { sockets: new Set(), perAddress: new Map(), strangers: new Strangers(), searches: new Semaphore(SEARCHES_AT_ONCE) };
  const accept = (socket: net.Socket, encrypted: boolean) => {
    const address = admit(open, socket);
    if (address === null) return;
    const connection = new Connection(core, tree, o, logger, socket, address, encrypted, secure, open.strangers, open.searches);
    socket.on('close', () => open.strangers.remove(connection));
    connection.start();
  };
  const servers: net.Server[] = [];
  const close = () => closeAll(servers, open.sockets);
  try {
    const port =
      o.port === null
        ? null
        : await listen(
            servers,
            net.createServer((socket) => accept(socket, false)),
            o.host,
            o.port,
          );
    // A TLS socket is a net.Socket: the handshake is over before a request is read.
    const tlsPort =
      o.tlsPort === null
        ? null
        : await listen(
            servers,
            tls.createServer({ cert: o.tls!.cert, key: o.tls!.key, minVersion: 'TLSv1.2', handshakeTimeout: 10_000 }, (socket) => accept(socket, true)),
            o.host,
            o.tlsPort,
          );
    return { port, tlsPort, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Counts a new connection in (its address), or turns it away busy (null): too many from its
 * address, no stranger's slot left for its address, or the server full. A counted socket is
 * counted out when it closes.
 */
function admit(open: Open, socket: net.Socket): string | null {
  const address = socket.remoteAddress ?? 'unknown';
  const count = (open.perAddress.get(address) ?? 0) + 1;
  if (count > PER_ADDRESS || !open.strangers.roomFor(address) || open.sockets.size >= MAX_CONNECTIONS) {
    socket.end(extended(0, RESULT.busy, 'too many connections', { name: OID.noticeOfDisconnection }));
    socket.destroy();
    return null;
  }
  open.perAddress.set(address, count);
  open.sockets.add(socket);
  socket.on('close', () => {
    open.sockets.delete(socket);
    const left = (open.perAddress.get(address) ?? 1) - 1;
    if (left <= 0) open.perAddress.delete(address);
    else open.perAddress.set(address, left);
  });
  return address;
}

/** Listens on host:port (0 picks one) and adds the server to those close() ends; the port bound. */
async function listen(servers: net.Server[], server: net.Server, host: string, port: number): Promise<number> {
  server.maxConnections = MAX_CONNECTIONS + 16;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  servers.push(server);
  return (server.address() as net.AddressInfo).port;
}

/** Ends every connection and stops every listener. */
function closeAll(servers: readonly net.Server[], sockets: ReadonlySet<net.Socket>): Promise<void> {
  return new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    let open = servers.length;
    if (open === 0) return resolve();
    for (const server of servers) server.close(() => --open === 0 && resolve());
  });
}

/** The base DN when none is given: the dc= parts of the public URL's domain (auth.example.com → dc=example,dc=com). */
export function defaultBaseDn(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$/.test(host) || host.includes(':')) return 'dc=gatehouse';
  const labels = host.split('.').filter(Boolean);
  const domain = labels.length > 2 ? labels.slice(-2) : labels;
  return domain.map((l) => `dc=${l}`).join(',');
}
