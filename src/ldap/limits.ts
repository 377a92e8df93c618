/**
 * The LDAP listener's limits, in one place: how long a connection may idle, how many one address
 * and the whole server hold, how much a stranger (a connection that has not bound) may send, and
 * how far a connection reads ahead of what its client has read.
 */
export const IDLE_MS = 5 * 60_000;
export const PER_ADDRESS = 64;
export const MAX_CONNECTIONS = 2048;
/** Connections that have not bound: idle seconds, not minutes; a few per address; a share of the slots. */
export const UNBOUND_IDLE_MS = 10_000;
export const UNBOUND_PER_ADDRESS = 8;
export const MAX_UNBOUND = 256;
/** A message before a bind: a bind, StartTLS or a read of the root DSE needs little. */
export const MAX_UNBOUND_MESSAGE = 64 * 1024;
/** Requests read and not yet answered on one connection: past this, reading waits. */
export const MAX_PENDING = 64;
/** Answers the client has not read yet: past this, reading waits; far past it, the client is dropped. */
export const HIGH_WATER = 256 * 1024;
export const MAX_UNREAD = 4 * 1024 * 1024;
