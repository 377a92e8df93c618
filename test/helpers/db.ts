/**
 * A separate connection to a test's store, for the tests' own checks and setups (reading rows,
 * adding a failing trigger). The server never sees it: it goes through the core like any client.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Test } from 'tap';
import { loadConfig, type Config } from '../../src/config';
import { Clock, systemClock } from '../../src/clock';
import { openStore, SQLITE_FILE, sqliteThreadKnex, Store } from '../../src/store/connection';

export function inspectionDb(t: Test, config: Config): Knex {
  const db = config.db
    ? knexFactory({ client: 'pg', connection: config.db, pool: { min: 0, max: 2 } })
    : // In a thread of its own, as the server's writer: its waits for the lock never hold the event loop the server shares.
      sqliteThreadKnex(path.join(config.dataDir, 'gatehouse.sqlite'), 'PRAGMA foreign_keys = ON;', 10000);
  t.teardown(() => db.destroy());
  return db;
}

/** The store itself (real migrations), for tests of store functions; closed after the test. */
export async function openTestStore(t: Test, config: Config, clock: Clock = systemClock): Promise<Store> {
  const store = await openStore(config, clock);
  t.teardown(() => store.close());
  return store;
}

const versionOf = (pkg: string, root: string) =>
  (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The migrations' fingerprint: the files in migrations/ (names and contents), the list that orders
 * them, the code that runs them and the drivers' versions. A change makes (and uses) other templates.
 */
export function migrationsHash(): string {
  const root = path.resolve(__dirname, '..', '..');
  const h = createHash('sha256');
  const dir = path.join(root, 'migrations');
  for (const name of fs.readdirSync(dir).sort()) {
    h.update(`${name}\0`);
    h.update(fs.readFileSync(path.join(dir, name)));
  }
  for (const name of ['migrations.ts', 'connection.ts', 'identity.ts', 'sqlite-knex.ts']) h.update(fs.readFileSync(path.join(root, 'src', 'store', name)));
  for (const pkg of ['knex', 'pg']) h.update(`${pkg}@${versionOf(pkg, root)}\0`);
  h.update(`sqlite@${process.versions.sqlite}\0`);
  return h.digest('hex').slice(0, 16);
}

/**
 * A SQLite store file migrated once (by openStore, as a server does, then closed: no -wal left)
 * and kept in the temp folder, for seedSqliteStore to copy. Made under a name of its own and
 * renamed into place when complete, so two test processes making it at once never copy half a file.
 */
let sqliteTemplate: Promise<string> | undefined;
function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const file = path.join(os.tmpdir(), `gatehouse-test-template-${migrationsHash()}.sqlite`);
    if (fs.existsSync(file)) return file;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-template-'));
    try {
      const store = await openStore(loadConfig({ dataDir: dir }, {}), systemClock);
      await store.close();
      // The last connection's close checkpoints the log into the file and removes it.
      if (fs.existsSync(path.join(dir, `${SQLITE_FILE}-wal`))) throw new Error('the template store kept its -wal file after closing');
      fs.renameSync(path.join(dir, SQLITE_FILE), file);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    return file;
  })();
  sqliteTemplate.catch(() => (sqliteTemplate = undefined));
  return sqliteTemplate;
}

/**
 * Puts a migrated SQLite store in `dataDir` (an existing folder without one): a copy of the
 * template instead of running every migration again for each test server. A folder that is not
 * there yet, or already holds a store (a test's own, an older one to upgrade), is left as it is.
 * Only the test servers' folders get one: the shell's and the executable's tests that make a
 * store (migrate, bootstrap-admin, serve on a new folder) still run every migration.
 */
export async function seedSqliteStore(dataDir: string): Promise<void> {
  const file = path.join(dataDir, SQLITE_FILE);
  if (!fs.statSync(dataDir, { throwIfNoEntry: false })?.isDirectory() || fs.existsSync(file)) return;
  const template = await migratedSqliteTemplate();
  // Copied beside it and renamed: the store file appears whole. The copy keeps the template's mode (0600).
  const part = `${file}.${randomBytes(4).toString('hex')}.part`;
  fs.copyFileSync(template, part);
  fs.renameSync(part, file);
}
