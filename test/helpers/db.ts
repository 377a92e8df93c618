/**
 * A separate connection to a test's store, for the tests' own checks and setups (reading rows,
 * adding a failing trigger). The server never sees it: it goes through the core like any client.
 */
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Test } from 'tap';
import type { Config } from '../../src/config';
import { Clock, systemClock } from '../../src/clock';
import { openStore, Store } from '../../src/store/connection';

export function inspectionDb(t: Test, config: Config): Knex {
  const db = config.db
    ? knexFactory({ client: 'pg', connection: config.db, pool: { min: 0, max: 2 } })
    : knexFactory({
        client: 'sqlite3',
        connection: { filename: path.join(config.dataDir, 'gatehouse.sqlite') },
        useNullAsDefault: true,
        pool: {
          min: 1,
          max: 1,
          afterCreate(conn: { exec(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
            conn.exec('PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;', (err) => done(err, conn));
          },
        },
      });
  t.teardown(() => db.destroy());
  return db;
}

/** The store itself (real migrations), for tests of store functions; closed after the test. */
export async function openTestStore(t: Test, config: Config, clock: Clock = systemClock): Promise<Store> {
  const store = await openStore(config, clock);
  t.teardown(() => store.close());
  return store;
}
