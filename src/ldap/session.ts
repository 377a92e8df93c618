/**
 * What a request's handler (bind.ts, search.ts) may see and do of its connection (connection.ts):
 * the directory, the tree, the options, who is bound, and a way to answer or to hang up.
 */
import type net from 'node:net';
import type tls from 'node:tls';
import type { Core, DirectoryIdentity } from '../core';
import type { Semaphore } from '../core';
import type { WorkBudget } from './limits';
import type { LdapOptions } from './options';
import type { Tree } from './tree';

export interface Session {
  readonly core: Core;
  readonly tree: Tree;
  readonly o: LdapOptions;
  /** The client's address. */
  readonly address: string;
  /** LDAPS from the start, or after StartTLS. */
  readonly encrypted: boolean;
  /** The certificate for StartTLS, or null when the server has none. */
  readonly secure: tls.SecureContext | null;
  /** The socket answers leave by now (the TLS one after StartTLS). */
  readonly socket: net.Socket;
  /** Searches at once over every connection (limits.ts: SEARCHES_AT_ONCE). */
  readonly searches: Semaphore;
  /** The filtering work this connection may still do (limits.ts). */
  readonly work: WorkBudget;
  /** Who bound, or null. */
  identity: DirectoryIdentity | null;
  /** Writes an answer (nothing once the connection has ended). */
  send(bytes: Buffer): void;
  /** Bound or not: the idle time and the share of slots the connection gets. */
  setBound(bound: boolean): void;
}
