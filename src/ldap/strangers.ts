/**
 * The slots of connections that have not bound, oldest first, and how many each address holds:
 * unauthenticated clients get a share of the server, and a flood of them recycles its own slots.
 */
import { MAX_UNBOUND, UNBOUND_PER_ADDRESS } from './limits';

/** A connection as the strangers' slots see it. */
export interface Stranger {
  readonly address: string;
  /** Ends the connection to make room for a newer stranger. */
  evict(): void;
}

export class Strangers {
  private readonly all = new Set<Stranger>();
  private readonly byAddress = new Map<string, number>();

  /** Whether this address may open one more connection that has not bound. */
  roomFor(address: string): boolean {
    return (this.byAddress.get(address) ?? 0) < UNBOUND_PER_ADDRESS;
  }

  add(c: Stranger): void {
    if (this.all.has(c)) return;
    // The oldest stranger makes room: a flood of strangers recycles its own slots, never the bound ones.
    if (this.all.size >= MAX_UNBOUND) this.all.values().next().value?.evict();
    this.all.add(c);
    this.byAddress.set(c.address, (this.byAddress.get(c.address) ?? 0) + 1);
  }

  remove(c: Stranger): void {
    if (!this.all.delete(c)) return;
    const left = (this.byAddress.get(c.address) ?? 1) - 1;
    if (left <= 0) this.byAddress.delete(c.address);
    else this.byAddress.set(c.address, left);
  }
}
