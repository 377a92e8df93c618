/**
 * One LDAP connection: it frames and decodes the requests it reads (protocol.ts), answers them
 * one at a time (bind.ts, search.ts, here the rest), switches to TLS on StartTLS, and ends with a
 * notice of disconnection on anything malformed, oversize or idle. It reads no further than it has
 * answered (a bounded number of requests waiting, a bounded amount unread by the client), and it
 * checks a bound identity again before each request that uses it.
 */
import type net from 'node:net';
import tls from 'node:tls';
import type { Core, DirectoryIdentity } from '../core';
import type { Semaphore } from '../core';
import { isAppError } from '../errors';
import type { Logger } from '../log';
import { decode, extended, frame, MAX_FILTER_TERMS, MAX_MESSAGE, OID, OP, result, RESULT, type Request } from './protocol';
import type { Tree } from './tree';
import type { LdapOptions } from './options';
import type { Session } from './session';
import type { Strangers } from './strangers';
import { HIGH_WATER, IDLE_MS, MAX_PENDING, MAX_UNBOUND_MESSAGE, MAX_UNREAD, UNBOUND_IDLE_MS, WorkBudget } from './limits';
import { bind } from './bind';
import { compare, search } from './search';

export class Connection implements Session {
  private buffer: Buffer = Buffer.alloc(0);
  /** The connection's socket: the TCP one, or the TLS one over it after StartTLS. */
  socket: net.Socket;
  /** The TCP socket (or LDAPS's from the start), which every byte passes through. */
  private readonly tcp: net.Socket;
  identity: DirectoryIdentity | null = null;
  readonly work = new WorkBudget();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  /** Requests read and not yet answered. */
  private pending = 0;
  /** StartTLS was read: nothing more is read until the handshake is over. */
  private upgrading = false;

  constructor(
    readonly core: Core,
    readonly tree: Tree,
    readonly o: LdapOptions,
    private readonly logger: Logger,
    socket: net.Socket,
    readonly address: string,
    /** LDAPS from the start, or after StartTLS. */
    public encrypted: boolean,
    readonly secure: tls.SecureContext | null,
    private readonly strangers: Strangers,
    readonly searches: Semaphore,
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
  setBound(bound: boolean): void {
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

  send(bytes: Buffer): void {
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
        return bind(this, r);
      case 'search':
        return search(this, r);
      case 'compare':
        return compare(this, r);
      case 'extended':
        return this.extended(r);
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

  /** Extended operations: Who am I? (RFC 4532) and StartTLS; any other is a protocol error. */
  private extended(r: Extract<Request, { kind: 'extended' }>): void {
    if (r.oid === OID.whoAmI)
      return this.send(extended(r.id, RESULT.success, '', { value: this.identity ? `dn:${this.tree.personDn(this.identity.username)}` : '' }));
    if (r.oid === OID.startTls) return this.startTls(r.id);
    return this.send(extended(r.id, RESULT.protocolError, `unknown extended operation ${r.oid.slice(0, 60)}`));
  }
}
