/** Bounds how many async jobs run at once; the rest wait in FIFO order. */
export class Semaphore {
  private active = 0;
  /** Jobs finished since start. */
  done = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await job();
    } finally {
      this.done++;
      // Hand the slot straight to the next waiter (active stays the same) or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Jobs running now (at most the limit). */
  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
