/**
 * Group commit: small independent writes that arrive together share one transaction, so one
 * disk flush (SQLite's synchronous=FULL, PostgreSQL's synchronous_commit) serves them all.
 *
 * Each write still resolves only once its transaction has committed, so nothing is reported
 * stored before it is durable. A write that arrives while a batch commits waits for the next
 * one; when nothing else is waiting, a batch is just that one write. If any write of a batch
 * fails, the batch is rolled back and every write in it is run again on its own, so one bad
 * write never takes the others down with it and each caller gets its own answer.
 *
 * Anything else that ends a batch (the lock not had in time, a failed COMMIT, the writer gone)
 * answers every write in it with that error, and none is run again: a COMMIT whose answer was
 * lost may have happened, and a write run twice could apply twice; and a lock that was not had
 * in time would only be waited for again, once per write. Each write waits for the lock at most
 * the busy timeout from when it was asked, its time in the queue counted.
 */
import type { Handle } from './handle';

interface Job {
  fn: (h: Handle) => Promise<unknown>;
  /** When it was asked (ms): its wait for the lock ends at asked + the busy timeout. */
  asked: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Thrown inside a batch to roll it back when one of its writes failed. */
class BatchFailed extends Error {
  constructor(readonly first: unknown) {
    super('a write of the batch failed');
  }
}

/** A batch of one that waited no longer than this in the queue runs alone, with the whole busy timeout. */
const QUEUED_LITTLE_MS = 50;

export class GroupCommit {
  private queue: Job[] = [];
  private running = false;

  /**
   * @param root the autocommit handle (writes run alone on it after a failed batch)
   * @param transaction runs a function in a new transaction on the root, waiting at most `waitMs` for its lock
   * @param busyWaitMs how long a write may wait for the lock, its time in the queue counted (Infinity: no bound here)
   */
  constructor(
    private readonly root: Handle,
    private readonly transaction: (fn: (h: Handle) => Promise<void>, waitMs: number) => Promise<void>,
    private readonly busyWaitMs = Infinity,
  ) {}

  run<T>(fn: (h: Handle) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, asked: Date.now(), resolve: resolve as (v: unknown) => void, reject });
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
    const waited = Date.now() - Math.min(...batch.map((job) => job.asked));
    if (batch.length === 1 && waited <= QUEUED_LITTLE_MS) return settle(batch[0], this.root);
    const waitMs = Math.max(0, this.busyWaitMs - waited);
    let results: unknown[] = [];
    try {
      await this.transaction(async (h) => {
        // All handed to the connection at once: the driver runs them one after another without
        // waiting for this thread between them (a busy event loop would otherwise delay every
        // step of the batch). Their order within a batch means nothing: they came from different
        // requests at the same moment. Every one settles before the commit or the rollback.
        const settled = await Promise.allSettled(batch.map((job) => job.fn(h)));
        const failed = settled.find((r) => r.status === 'rejected');
        if (failed) throw new BatchFailed(failed.reason);
        results = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value);
      }, waitMs);
    } catch (err) {
      if (!(err instanceof BatchFailed)) {
        // Not had, or its end unknown: every write gets the answer, none runs twice.
        for (const job of batch) job.reject(err);
      } else if (batch.length === 1) {
        batch[0].reject(err.first);
      } else {
        // Rolled back before COMMIT because a write failed: each write again, alone, with its own answer.
        for (const job of batch) await settle(job, this.root);
      }
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
