/**
 * The writes of one group-commit batch on SQLite, each distinct statement prepared once for the
 * batch. Through the query builder every write is three trips to libuv's pool (prepare, run,
 * finalize), one after another on the one writer connection; a batch of the same few writes
 * (a token exchange's upserts, say) now makes one trip per write and two per distinct statement.
 * Statements live only as long as the batch: nothing prepared outlives its transaction, so the
 * connection closes and migrates as before.
 */
import type sqlite3 from 'sqlite3';

export class PreparedWrites {
  private readonly statements = new Map<string, Promise<sqlite3.Statement>>();

  constructor(private readonly db: sqlite3.Database) {}

  readonly run = async (sql: string, params: readonly unknown[]): Promise<void> => {
    const stmt = await this.prepare(sql);
    await new Promise<void>((resolve, reject) => stmt.run(params as unknown[], (err: Error | null) => (err ? reject(err) : resolve())));
  };

  private prepare(sql: string): Promise<sqlite3.Statement> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = new Promise((resolve, reject) => {
        const s = this.db.prepare(sql, (err: Error | null) => (err ? reject(err) : resolve(s)));
      });
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Finalizes every statement the batch prepared (those that failed to prepare have nothing to free). */
  async finalize(): Promise<void> {
    const prepared = await Promise.allSettled(this.statements.values());
    this.statements.clear();
    await Promise.all(prepared.map((p) => (p.status === 'fulfilled' ? new Promise<void>((resolve) => p.value.finalize(() => resolve())) : undefined)));
  }
}
