// The benchmark's baseline, the minimal server: node:http alone, verifying the same JWT (RS256 with
// the store's signing key, a KeyObject made once, no cache) and reading auth_version with one
// prepared statement through the same SQLite driver (node:sqlite, on the event loop, as
// Gatehouse's reads run), no framework, no query builder: what any backend checking a Gatehouse
// token against the store would do at least, and so the physical limit of Gatehouse's design.
// Usage: node scripts/baseline-server.mjs <sqlite file>. Prints {"url": …} once listening.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import http from 'node:http';
import jwt from 'jsonwebtoken';
import { DatabaseSync } from 'node:sqlite';

const file = process.argv[2];
const db = new DatabaseSync(file, { readOnly: true });
const keyRow = db.prepare(`SELECT private_key, alg FROM signing_key WHERE retired_at IS NULL ORDER BY created_at DESC`).get();
const key = createPublicKey(createPrivateKey(keyRow.private_key));
const stmt = db.prepare('SELECT auth_version FROM user_account WHERE reference_id = ?');
const authVersion = async (ref) => stmt.get(ref)?.auth_version;

const send = (res, status, body) => {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};
const server = http.createServer(async (req, res) => {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  if (!m) return send(res, 401);
  let claims;
  try {
    claims = jwt.verify(m[1], key, { algorithms: [keyRow.alg] });
  } catch {
    return send(res, 401);
  }
  try {
    const version = await authVersion(claims.sub);
    if (version !== claims.auth_version) return send(res, 401);
    send(res, 200, { ok: true, sub: claims.sub });
  } catch {
    send(res, 500);
  }
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }));
});
process.on('SIGTERM', () =>
  server.close(() => {
    db.close();
    process.exit(0);
  }),
);
