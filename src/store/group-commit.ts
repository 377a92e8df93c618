/**
 * Group commit: small independent writes that arrive together share one transaction, so one
 * disk flush (SQLite's synchronous=FULL, PostgreSQL's synchronous_commit) serves them all.
 *
 * Each write still resolves only once its transaction has committed, so nothing is reported
 * stored before it is durable. A write that arrives while a batch commits waits for the next
 * one; when nothing else is waiting, a batch is just that one write. If any write of a batch
 * fails, the batch is rolled back and every write in it is run again on its own, so one bad
 * write never takes the others down with it and each caller gets its own answer.
 */
import type { Handle } from './handle';

interface Job {
  fn: (h: Handle) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Thrown inside a batch to roll it back when one of its writes failed. */
class BatchFailed extends Error {}

export class GroupCommit {
  private queue: Job[] = [];
  private running = false;

  /**
   * @param root the autocommit handle (writes run alone on it after a failed batch)
   * @param transaction runs a function in a new transaction on the root
   */
  constructor(
    private readonly root: Handle,
    private readonly transaction: (fn: (h: Handle) => Promise<void>) => Promise<void>,
  ) {}

  run<T>(fn: (h: Handle) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        // One turn of the event loop first: writes made by the same burst of requests join in.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.commit(batch);
    }
    this.running = false;
  }

  private async commit(batch: Job[]): Promise<void> {
    if (batch.length === 1) return settle(batch[0], this.root);
    let results: unknown[] = [];
    try {
      await this.transaction(async (h) => {
        // All handed to the connection at once: the driver runs them one after another without
        // waiting for this thread between them (a busy event loop would otherwise delay every
        // step of the batch). Their order within a batch means nothing: they came from different
        // requests at the same moment. Every one settles before the commit or the rollback.
        const settled = await Promise.allSettled(batch.map((job) => job.fn(h)));
        if (settled.some((r) => r.status === 'rejected')) throw new BatchFailed();
        results = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value);
      });
    } catch {
      // Rolled back (a write failed, or the commit did): each write again, alone, with its own answer.
      for (const job of batch) await settle(job, this.root);
      return;
    }
    batch.forEach((job, i) => job.resolve(results[i]));
  }
}

async function settle(job: Job, h: Handle): Promise<void> {
  try {
    job.resolve(await job.fn(h));
  } catch (err) {
    job.reject(err);
  }
}
