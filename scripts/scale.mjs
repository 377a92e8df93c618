// How cost grows with the number of accounts, for npm run bench (or alone:
// node scripts/scale.mjs [--sizes 1000,100000,1000000] [--pg URL] [--instances 2] [--duration 3]).
// For each size: a fresh store, the first account signed up through the API (it administers),
// the rest written straight into the store by one INSERT … SELECT per table (each with its home
// group and memberships, as signup makes them, all with the first account's password hash), then
// signin, signup, an authenticated get, a list filtered to one row and a list page of 100 under
// load, the store's size on disk and the server's RSS.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import knexFactory from 'knex';
import { sqliteKnex } from './sqlite-knex.mjs';
import { benchServeArgs, rssOf, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PASSWORD = 'benchmark password 1234';

/** Generated ids in the store's UUID form. */
const UUID_SQL = {
  sqlite: `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
  postgres: `gen_random_uuid()::text`,
};

/** Accounts seed1 … seedN (N = count; usernames seed1 … seedN), each with its home group and its two memberships. */
export async function seedAccounts(knex, dialect, count) {
  const uuid = UUID_SQL[dialect];
  const series =
    dialect === 'sqlite'
      ? `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${Number(count)}) `
      : `WITH seq(n) AS (SELECT generate_series(1, ${Number(count)})) `;
  const first = await knex('user_account').orderBy('id').first();
  const world = Object.fromEntries((await knex('world').select('table_name', 'default_permission')).map((w) => [w.table_name, Number(w.default_permission)]));
  const users = (await knex('usergroup').where({ system_role: 'users' }).first()).id;
  const now = Date.now();
  const concat = (...parts) => parts.join(' || ');
  await knex.transaction(async (trx) => {
    await trx.raw(
      `INSERT INTO user_account (reference_id, email, email_key, username, name, password, permission, created_at, updated_at)
       ${series} SELECT ${uuid}, ${concat(`'seed'`, 'n', `'@scale.example'`)}, ${concat(`'seed'`, 'n', `'@scale.example'`)}, ${concat(`'seed'`, 'n')}, ${concat(`'Seed '`, 'n')}, ?, ?, ?, ? FROM seq`,
      [first.password, world.user_account, now, now],
    );
    await trx.raw(`UPDATE user_account SET user_account_id = id WHERE user_account_id IS NULL`);
    // POSIX numbers, as the account maker gives them (stores made before them have no counter).
    if (await trx.schema.hasTable('posix_counter')) {
      const [{ next_id: next }] = await trx('posix_counter').select('next_id');
      await trx.raw(`UPDATE user_account SET posix_id = ? + id WHERE posix_id IS NULL`, [Number(next)]);
      const [{ top }] = await trx('user_account').max({ top: 'posix_id' });
      await trx('posix_counter').update({ next_id: Number(top) + 1 });
    }
    await trx.raw(
      `INSERT INTO usergroup (reference_id, name, permission, user_account_id, created_at, updated_at)
       SELECT ${uuid}, ${concat(`'Home group of '`, 'a.name')}, ?, a.id, ?, ? FROM user_account a WHERE a.email_key LIKE 'seed%@scale.example'`,
      [world.usergroup, now, now],
    );
    for (const group of ['g.id', String(Number(users))]) {
      await trx.raw(
        `INSERT INTO membership (reference_id, account_id, usergroup_id, permission, user_account_id, created_at, updated_at)
         SELECT ${uuid}, a.id, ${group}, ?, a.id, ?, ? FROM user_account a JOIN usergroup g ON g.user_account_id = a.id AND g.system_role IS NULL
         WHERE a.email_key LIKE 'seed%@scale.example'`,
        [world.membership, now, now],
      );
    }
  });
  if (dialect === 'sqlite') await knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  await knex.raw('ANALYZE');
}

const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`;

async function call(url, method, body, token) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/**
 * Waits until every instance has hashed what the last load left queued and answers a read
 * promptly again: what one load left behind must not count in the next.
 */
async function settled(urls, token) {
  for (let quick = 0; quick < 3;) {
    // /statistics counts accounts (slow on a big store): its hash figures only; promptness from /ping.
    const stats = await Promise.all(urls.map((u) => call(`${u}/statistics`, 'GET', undefined, token)));
    const idle = stats.every((r) => r.body?.auth?.hashes_queued === 0 && r.body?.auth?.hashes_running === 0);
    const t0 = performance.now();
    await Promise.all(urls.map((u) => fetch(`${u}/ping`).then((r) => r.arrayBuffer())));
    quick = idle && performance.now() - t0 < 20 ? quick + 1 : 0;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The same load on every instance (connections split evenly), requests per second added up. */
async function load(urls, pathOrOpts, { duration, connections, token }) {
  await settled(urls, token);
  const opts = typeof pathOrOpts === 'string' ? { path: pathOrOpts } : pathOrOpts;
  const per = Math.max(1, Math.round(connections / urls.length));
  const parts = await Promise.all(
    urls.map(
      (u) =>
        new Promise((resolve, reject) => autocannon({ ...opts, url: u + opts.path, duration, connections: per }, (err, r) => (err ? reject(err) : resolve(r)))),
    ),
  );
  const rps = parts.reduce((a, r) => a + r.requests.average, 0);
  const bad = parts.reduce((a, r) => a + r.non2xx + r.errors, 0);
  return `${rps.toFixed(0)}${bad ? ` (${bad} failed)` : ''}`;
}

/**
 * The administrators' console as a browser uses it: signed in through the pages (cookie, CSRF),
 * then the median time of five loads of the account list's first page, a page after a cursor
 * (keyset paging), a search that finds one account, and a search that finds none (every row read).
 */
async function consoleTimings(url, email) {
  const jar = new Map();
  const go = async (p, init = {}) => {
    const res = await fetch(url + p, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return { status: res.status, text: await res.text() };
  };
  await go('/signin');
  const body = new URLSearchParams({ csrf: jar.get('gatehouse_csrf'), email, password: PASSWORD }).toString();
  await go('/signin', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url }, body });
  const time = async (p) => {
    const took = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const r = await go(p);
      if (r.status !== 200) throw new Error(`${p}: ${r.status}`);
      took.push(performance.now() - started);
    }
    return `${took.sort((a, b) => a - b)[2].toFixed(1)} ms`;
  };
  const first = await go('/admin/accounts');
  const cursor = /after=([0-9a-f-]{36})/.exec(first.text)?.[1];
  return {
    first: await time('/admin/accounts'),
    next: cursor ? await time(`/admin/accounts?after=${cursor}`) : '-',
    found: await time(`/admin/accounts?q=${encodeURIComponent('seed4242@')}`),
    none: await time(`/admin/accounts?q=${encodeURIComponent('nobody-here')}`),
  };
}

/** One size: fresh store, seeded, measured. Returns one row of the table. */
async function measure({ exe, size, pg, instances, duration, connections, cost }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-scale-'));
  let db = null;
  if (pg) {
    const name = `gh_scale_${process.pid}_${size}`;
    const admin = knexFactory({ client: 'pg', connection: pg });
    await admin.raw(`DROP DATABASE IF EXISTS ${name}`);
    await admin.raw(`CREATE DATABASE ${name}`);
    await admin.destroy();
    const u = new URL(pg);
    u.pathname = `/${name}`;
    db = { name, url: u.toString() };
  }
  const args = benchServeArgs(dataDir, cost, ...(db ? ['--db', db.url] : []));
  const servers = [spawnJsonLine(exe, args)];
  const knex = db ? knexFactory({ client: 'pg', connection: db.url }) : sqliteKnex(path.join(dataDir, 'gatehouse.sqlite'));
  try {
    const url = await servers[0].ready;
    const first = { email: 'admin@scale.example', name: 'Admin', password: PASSWORD, passwordConfirm: PASSWORD };
    await call(`${url}/action/user_account/signup`, 'POST', { attributes: first });
    const seedStarted = performance.now();
    if (size > 1) await seedAccounts(knex, db ? 'postgres' : 'sqlite', size - 1);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    // One issuer for all: a token from one instance is good on every other (as behind a load balancer).
    for (let i = 1; i < instances; i++) servers.push(spawnJsonLine(exe, [...args, '--public-url', url]));
    const urls = await Promise.all(servers.map((s) => s.ready));
    const signin = async (email) =>
      (await call(`${url}/action/user_account/signin`, 'POST', { attributes: { email, password: PASSWORD } })).body[0].Attributes.value;
    const adminToken = await signin(first.email);
    // Guests may sign up (closed by default).
    const signupAction = (await call(`${url}/api/action?filter=signup`, 'GET', undefined, adminToken)).body.data[0].id;
    const opened = { data: { type: 'action', id: signupAction, attributes: { permission: 2097057 } }, meta: {} };
    await call(`${url}/api/action/${signupAction}`, 'PATCH', opened, adminToken);
    const middle = `seed${Math.max(1, Math.floor(size / 2))}@scale.example`;
    const userToken = size > 1 ? await signin(middle) : adminToken;
    const me = (await call(`${url}/api/me`, 'GET', undefined, userToken)).body.data.id;
    // The list figures read as the administrator (every row readable: what is measured is the store, not the rule).
    const auth = (token) => ({ headers: { authorization: `Bearer ${token}` } });
    const opts = { duration, connections, token: adminToken };
    const get = await load(urls, { path: `/api/user_account/${me}`, ...auth(userToken) }, opts);
    const page = await load(urls, { path: `/api/user_account?page[size]=100&page[number]=3`, ...auth(adminToken) }, opts);
    const signins = await load(
      urls,
      {
        path: '/action/user_account/signin',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attributes: { email: middle, password: PASSWORD } }),
      },
      opts,
    );
    let n = 0;
    const signups = await load(
      urls,
      {
        path: '/action/user_account/signup',
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                attributes: { email: `new${++n}-${process.pid}@scale.example`, name: 'New', password: PASSWORD, passwordConfirm: PASSWORD },
              }),
            }),
          },
        ],
      },
      opts,
    );
    // A substring filter (the trigram indexes serve it; every seeded address shares most of its
    // trigrams with this one, so this is their hard case).
    const one = await load(urls, { path: `/api/user_account?filter=${encodeURIComponent(middle)}`, ...auth(adminToken) }, opts);
    const console_ = await consoleTimings(url, first.email);
    const rss = Math.max(...servers.map((s) => rssOf(s.child.pid)));
    let bytes;
    if (db) bytes = Number((await knex.raw(`SELECT pg_database_size(current_database()) AS b`)).rows[0].b);
    else
      bytes = fs
        .readdirSync(dataDir)
        .filter((f) => f.startsWith('gatehouse.sqlite'))
        .reduce((a, f) => a + fs.statSync(path.join(dataDir, f)).size, 0);
    return { size, seedSeconds, signins, signups, get, one, page, bytes, rss, console: console_ };
  } finally {
    await knex.destroy();
    for (const s of servers) await stop(s.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (db) {
      const admin = knexFactory({ client: 'pg', connection: pg });
      await admin.raw(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`);
      await admin.destroy();
    }
  }
}

export async function scalingTable({ exe, sizes, pg = null, instances = 1, duration = 3, connections = 16, cost = 11 }) {
  const store = pg ? `PostgreSQL, ${instances} instance${instances > 1 ? 's' : ''}` : 'SQLite';
  console.log(`\nHow cost grows (${store}; requests/s at ${connections} connections, ${duration} s each; reads by the first account or a seeded one)`);
  const head = ['accounts', 'seeded in', 'signin/s', 'signup/s', 'get/s', 'list 1 row/s', 'page of 100/s', 'store', 'RSS'];
  const widths = [10, 10, 9, 9, 7, 13, 14, 11, 10];
  const line = (cells) => console.log(cells.map((c, i) => String(c).padStart(widths[i])).join(' '));
  line(head);
  const consoleRows = [];
  for (const size of sizes) {
    const r = await measure({ exe, size, pg, instances, duration, connections, cost });
    line([r.size.toLocaleString('en-US'), `${r.seedSeconds.toFixed(1)} s`, r.signins, r.signups, r.get, r.one, r.page, mib(r.bytes), mib(r.rss)]);
    consoleRows.push([r.size.toLocaleString('en-US'), r.console.first, r.console.next, r.console.found, r.console.none]);
  }
  console.log(`\nThe console's account list (${store}; median of 5 loads, one at a time)`);
  const cw = [10, 12, 14, 15, 15];
  const cline = (cells) => console.log(cells.map((c, i) => String(c).padStart(cw[i])).join(' '));
  cline(['accounts', 'first page', 'page after', 'search 1 hit', 'search 0 hits']);
  for (const row of consoleRows) cline(row);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  await scalingTable({
    exe: path.join(root, 'dist', 'gatehouse'),
    sizes: arg('sizes', '1000,100000,1000000').split(',').map(Number),
    pg: arg('pg', null),
    instances: Number(arg('instances', 1)),
    duration: Number(arg('duration', 3)),
    cost: Number(arg('cost', 11)),
  });
}
