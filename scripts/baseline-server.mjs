// The benchmark's baseline: a bare Koa server that verifies the same JWT (RS256 with the store's
// signing key, a KeyObject made once, no cache) and reads auth_version with one prepared
// statement through the same SQLite driver, no query builder: what any backend checking a
// Gatehouse token against the store would do at least.
// Usage: node scripts/baseline-server.mjs <sqlite file>. Prints {"url": …} once listening.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import Koa from 'koa';
import jwt from 'jsonwebtoken';
import sqlite3 from 'sqlite3';

const file = process.argv[2];
const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY);
const get = (sql, params) => new Promise((res, rej) => db.get(sql, params, (e, r) => (e ? rej(e) : res(r))));
const keyRow = await get(`SELECT private_key, alg FROM signing_key WHERE retired_at IS NULL ORDER BY created_at DESC`, []);
const key = createPublicKey(createPrivateKey(keyRow.private_key));
const stmt = db.prepare('SELECT auth_version FROM user_account WHERE reference_id = ?');
const authVersion = (ref) => new Promise((res, rej) => stmt.get([ref], (e, r) => (e ? rej(e) : res(r?.auth_version))));

const app = new Koa();
app.use(async (ctx) => {
  const m = /^Bearer (.+)$/.exec(ctx.get('authorization'));
  if (!m) return void (ctx.status = 401);
  let claims;
  try {
    claims = jwt.verify(m[1], key, { algorithms: [keyRow.alg] });
  } catch {
    return void (ctx.status = 401);
  }
  const version = await authVersion(claims.sub);
  if (version !== claims.auth_version) return void (ctx.status = 401);
  ctx.body = { ok: true, sub: claims.sub };
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }));
});
process.on('SIGTERM', () => server.close(() => db.close(() => process.exit(0))));
