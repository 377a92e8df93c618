// A knex over node:sqlite for the scripts that fill a store file themselves (scale, LDAP bench),
// on this thread: knex's own sqlite3 dialect with its driver calls answered by a DatabaseSync.
// The server's client is src/store/sqlite-knex.ts (its writer on a thread of its own); a script
// run by plain node cannot import it, and needs none of that.
import { createRequire } from 'node:module';
import { DatabaseSync } from 'node:sqlite';
import knexFactory from 'knex';

const require = createRequire(import.meta.url);
const Client_SQLite3 = require('knex/lib/dialects/sqlite3');

/** Bound as the sqlite3 package bound them: whole numbers as integers, booleans 1/0, dates in ms. */
const bindable = (v) =>
  typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : typeof v === 'boolean' ? BigInt(v) : v instanceof Date ? BigInt(v.valueOf()) : (v ?? null);

class ScriptSqliteClient extends Client_SQLite3 {
  _driver() {
    return {};
  }
  async acquireRawConnection() {
    const db = new DatabaseSync(this.connectionSettings.filename);
    db.exec('PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;');
    return db;
  }
  async destroyRawConnection(db) {
    db.close();
  }
  async _query(db, obj) {
    const stmt = db.prepare(obj.sql);
    const params = (obj.bindings ?? []).map(bindable);
    const runs = obj.method === 'insert' || obj.method === 'update' ? !obj.returning : obj.method === 'counter' || obj.method === 'del';
    if (runs) {
      const r = stmt.run(...params);
      obj.context = { lastID: Number(r.lastInsertRowid), changes: Number(r.changes) };
    } else obj.response = stmt.all(...params);
    return obj;
  }
}

export const sqliteKnex = (filename) => knexFactory({ client: ScriptSqliteClient, connection: { filename }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
