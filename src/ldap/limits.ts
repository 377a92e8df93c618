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

/**
 * A search's work: the values its filter's terms look at, over the entries in scope (match.ts).
 * One search may do this much (a fraction of a second of one core; an app's filters over a
 * hundred thousand people need a small share of it); a connection this much a minute, refilled
 * steadily.
 */
export const SEARCH_WORK = 5_000_000;
/** One entry's test runs without a pause, so it may do this much at most (a few milliseconds). */
export const ENTRY_WORK = 200_000;
export const CONNECTION_WORK_PER_MINUTE = 20_000_000;
/** The longest a search may run, whatever time limit its client sets (RFC 4511 4.5.1.5). */
export const SEARCH_TIME_MS = 10_000;
/**
 * Searches reading and testing entries at once, over every connection: the rest wait their turn,
 * so a flood of costly searches holds a bounded share of the store's reads and of the thread.
 */
export const SEARCHES_AT_ONCE = 2;
/** A search tests entries for this long at most before letting other work run (every request shares one thread). */
export const SLICE_MS = 4;

/** Work a connection may still do: a bucket of `capacity` units, refilled at `capacity` a minute. */
export class WorkBudget {
  private units: number;
  private at: number;

  constructor(
    private readonly capacity: number = CONNECTION_WORK_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {
    this.units = capacity;
    this.at = now();
  }

  /** Takes `units` when the bucket holds them; else the seconds until it would (nothing taken). */
  take(units: number): { taken: true } | { taken: false; waitSeconds: number } {
    const now = this.now();
    this.units = Math.min(this.capacity, this.units + ((now - this.at) * this.capacity) / 60_000);
    this.at = now;
    if (units <= this.units) {
      this.units -= units;
      return { taken: true };
    }
    return { taken: false, waitSeconds: Math.ceil(((units - this.units) * 60) / this.capacity) };
  }

  /** Takes what was spent beyond an estimate already taken, whether or not the bucket holds it (it refills from below zero). */
  charge(units: number): void {
    if (units > 0) this.units = Math.max(-this.capacity, this.units - units);
  }
}
