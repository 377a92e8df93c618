/**
 * bcrypt on worker threads of their own, each at a lower scheduling priority (nice 10).
 *
 * Why not libuv's pool, where the `bcrypt` package runs its async calls: SQLite's reads run on
 * that pool too, and a hash is ~50 ms of one core. During a signin storm every core was busy
 * hashing and the cheap reads got a third of their idle rate. A worker thread is a thread of
 * its own, so Linux lets us lower its priority alone (setpriority on its thread id): the event
 * loop and the reads are served first, hashing takes every cycle they leave, and when nothing
 * else runs a hash goes as fast as before. Workers start on the first hash and stop after a
 * minute without one, so an idle server carries no extra isolates.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { bundledAddonFile } from '../native/load';

/** How far hashing yields to the rest (0 = not at all, 19 = the most). */
export const HASH_NICE = 10;
const IDLE_MS = 60_000;

export type HashJob = { op: 'hash'; password: string; cost: number } | { op: 'compare'; password: string; hash: string };

// Plain JavaScript run by each worker (eval): nothing to bundle or resolve, only the addon's file.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
try {
  // /proc/thread-self -> <pid>/task/<tid>; setpriority on a thread id changes that thread alone.
  os.setPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()), workerData.nice);
} catch {} // not Linux, or not allowed: hashing still runs, at the usual priority
const addon = { exports: {} };
process.dlopen(addon, workerData.addon, os.constants.dlopen.RTLD_NOW);
const bcrypt = addon.exports;
parentPort.on('message', (job) => {
  try {
    const result =
      job.op === 'compare'
        ? bcrypt.compare_sync(job.password, job.hash)
        : bcrypt.encrypt_sync(job.password, bcrypt.gen_salt_sync('b', job.cost, randomBytes(16)));
    parentPort.postMessage({ result });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
`;

/** bcrypt's native addon: the executable's copy, or the prebuild the bcrypt package loads. */
function bcryptAddonFile(): string {
  const bundled = bundledAddonFile('bcrypt.glibc.node');
  if (bundled) return bundled;
  const dir = path.dirname(createRequire(__filename).resolve('bcrypt/package.json'));
  const nodeGypBuild = createRequire(path.join(dir, 'bcrypt.js'))('node-gyp-build') as { path(dir: string): string };
  return nodeGypBuild.path(dir);
}

interface Slot {
  worker: Worker;
  busy: boolean;
  idle: NodeJS.Timeout | null;
}

/**
 * At most `size` workers, one job each at a time. The caller bounds concurrency (a Semaphore of
 * the same size), so a job always finds a free worker or room to start one.
 */
export class HashWorkers {
  private readonly slots = new Set<Slot>();
  private addon: string | null = null;
  private closed = false;

  constructor(private readonly size: number) {}

  run(job: HashJob): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the password hasher is closed'));
    const slot = [...this.slots].find((s) => !s.busy) ?? this.start();
    slot.busy = true;
    if (slot.idle) clearTimeout(slot.idle);
    return new Promise((resolve, reject) => {
      /** `alive`: the worker answered and can take the next job (a failed or exited one is dropped). */
      const done = (alive: boolean, fn: () => void) => {
        slot.worker.off('message', onMessage);
        slot.worker.off('error', onError);
        slot.worker.off('exit', onExit);
        slot.busy = false;
        if (alive && !this.closed) slot.idle = setTimeout(() => this.stop(slot), IDLE_MS).unref();
        else this.slots.delete(slot);
        fn();
      };
      const onMessage = (m: { result?: unknown; error?: string }) =>
        done(true, () => (m.error !== undefined ? reject(new Error(`bcrypt: ${m.error}`)) : resolve(m.result)));
      const onError = (err: Error) => done(false, () => reject(err));
      const onExit = (code: number) => done(false, () => reject(new Error(`a hashing worker exited (${code})`)));
      slot.worker.on('message', onMessage);
      slot.worker.on('error', onError);
      slot.worker.on('exit', onExit);
      slot.worker.postMessage(job);
    });
  }

  private start(): Slot {
    if (this.slots.size >= this.size) throw new Error('more hashing jobs than workers');
    this.addon ??= bcryptAddonFile();
    // execArgv: [] so workers do not inherit loaders or inspector flags meant for the main thread.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { addon: this.addon, nice: HASH_NICE } });
    worker.unref(); // a worker never keeps the process alive
    const slot: Slot = { worker, busy: false, idle: null };
    // A worker that fails between jobs is dropped (the next job starts another); during a job, run() rejects it too.
    worker.on('error', () => this.slots.delete(slot));
    this.slots.add(slot);
    return slot;
  }

  private stop(slot: Slot): void {
    if (slot.busy) return;
    this.slots.delete(slot);
    void slot.worker.terminate();
  }

  /** Workers now running (started on demand, stopped when idle). */
  get workers(): number {
    return this.slots.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.slots];
    this.slots.clear();
    for (const s of all) if (s.idle) clearTimeout(s.idle);
    await Promise.all(all.map((s) => s.worker.terminate()));
  }
}
