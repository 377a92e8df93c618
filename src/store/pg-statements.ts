/**
 * PostgreSQL's twin of the SQLite read pool: reads on the store's root (token facts, lists,
 * gets) run as named prepared statements on the pool's connections, without the query builder.
 * PostgreSQL parses and plans each SQL shape once per connection instead of on every request;
 * node-postgres keeps the statement names per connection. The SQL shapes are few (allow-listed
 * columns); past MAX_NAMED distinct shapes, further ones run unnamed, so nothing grows unbounded.
 * Statements with LIKE always run unnamed (below).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Row } from './handle';

const MAX_NAMED = 200;

interface PgClient {
  query(config: { name?: string; text: string; values: readonly unknown[] }): Promise<{ rows: Row[] }>;
}

/** `?` placeholders (the store's SQL never has a literal `?`) as PostgreSQL's `$1`, `$2`, … */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export class PgStatements {
  private readonly shapes = new Map<string, { name?: string; text: string }>();

  constructor(private readonly knex: Knex) {}

  async all(sql: string, params: readonly unknown[]): Promise<Row[]> {
    let shape = this.shapes.get(sql);
    if (!shape) {
      const text = numbered(sql);
      // A LIKE pattern's selectivity decides the plan (a trigram index for a rare substring, the
      // primary key's order for a common one), and a prepared statement's generic plan cannot
      // see it: those are planned with their values each time.
      const named = this.shapes.size < MAX_NAMED && !/ LIKE /.test(sql);
      const name = named ? `gh_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` : undefined;
      shape = { name, text };
      if (name) this.shapes.set(sql, shape);
    }
    const conn = (await this.knex.client.acquireConnection()) as PgClient;
    try {
      return (await conn.query({ ...shape, values: params })).rows;
    } finally {
      await this.knex.client.releaseConnection(conn);
    }
  }
}
