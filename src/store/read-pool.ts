/**
 * Reads on the hot path (token checks, record lists and gets) bypass the query builder: a few
 * read-only SQLite connections with cached prepared statements. WAL lets them read while the
 * writer writes, and every statement sees the latest committed data, so nothing here can serve a
 * revoked token or an old permission. Each connection runs one statement at a time (queued in
 * JS), so waiting statements never sit on libuv's pool threads that password hashing also needs.
 */
import sqlite3 from 'sqlite3';

export type Row = Record<string, unknown>;

/** Prepared statements kept per connection (the SQL shapes are few: allow-listed columns). */
const MAX_STATEMENTS = 200;

interface Conn {
  db: sqlite3.Database;
  statements: Map<string, sqlite3.Statement>;
  busy: boolean;
  queue: Array<() => void>;
}

function open(filename: string, busyTimeoutMs: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(filename, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.configure('busyTimeout', busyTimeoutMs);
      resolve(db);
    });
  });
}

export class ReadPool {
  private next = 0;

  private constructor(private readonly conns: Conn[]) {}

  static async open(filename: string, size: number, busyTimeoutMs: number): Promise<ReadPool> {
    const dbs = await Promise.all(Array.from({ length: size }, () => open(filename, busyTimeoutMs)));
    return new ReadPool(dbs.map((db) => ({ db, statements: new Map(), busy: false, queue: [] })));
  }

  /** Runs `sql` (with ? placeholders) on the least busy connection. */
  all(sql: string, params: readonly unknown[]): Promise<Row[]> {
    const conn = this.pick();
    return new Promise<Row[]>((resolve, reject) => {
      const run = () => {
        conn.busy = true;
        const done = (err: Error | null, rows?: Row[]) => {
          conn.busy = false;
          conn.queue.shift()?.();
          if (err) reject(err);
          else resolve(rows ?? []);
        };
        const exec = (stmt: sqlite3.Statement) => stmt.all(params as unknown[], (err: Error | null, rows: Row[]) => done(err, rows));
        const cached = conn.statements.get(sql);
        if (cached) return void exec(cached);
        const stmt = conn.db.prepare(sql, (err) => {
          if (err) return done(err);
          if (conn.statements.size >= MAX_STATEMENTS) {
            const [oldestSql, oldest] = conn.statements.entries().next().value as [string, sqlite3.Statement];
            conn.statements.delete(oldestSql);
            oldest.finalize();
          }
          conn.statements.set(sql, stmt);
          exec(stmt);
        });
      };
      if (conn.busy) conn.queue.push(run);
      else run();
    });
  }

  private pick(): Conn {
    // Round-robin, preferring an idle connection, else the shortest queue.
    let best: Conn | null = null;
    for (let i = 0; i < this.conns.length; i++) {
      const c = this.conns[(this.next + i) % this.conns.length];
      if (!c.busy) {
        best = c;
        break;
      }
      if (!best || c.queue.length < best.queue.length) best = c;
    }
    this.next = (this.next + 1) % this.conns.length;
    return best!;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.conns.map(async (c) => {
        while (c.busy || c.queue.length) await new Promise((r) => setTimeout(r, 5));
        await Promise.all([...c.statements.values()].map((s) => new Promise<void>((r) => s.finalize(() => r()))));
        await new Promise<void>((r) => c.db.close(() => r()));
      }),
    );
  }
}
