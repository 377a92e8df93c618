/**
 * A real Gatehouse on port 0 over a real SQLite file (real migrations) in a temp folder.
 * Torn down by tap after the test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { Config, Flags, loadConfig } from '../../src/config';
import type { Knex } from 'knex';
import { Core, openCore } from '../../src/core';
import type { Clock } from '../../src/clock';
import { createLogger } from '../../src/log';
import { RunningServer, startServer } from '../../src/http/server';
import { migratedDatabase } from './pg';
import { inspectionDb, seedSqliteStore } from './db';

export interface TestServer {
  url: string;
  core: Core;
  config: Config;
  dataDir: string;
  logs: string[];
  server: RunningServer;
  /** A separate connection to the same store, for the test's own checks. */
  db: Knex;
  /** JSON request helper: returns status, headers and parsed body. */
  call(method: string, urlPath: string, options?: CallOptions): Promise<Reply>;
  action(type: string, name: string, attributes: unknown, token?: string): Promise<Reply>;
  signup(email: string, password?: string, token?: string): Promise<Reply>;
  signin(email: string, password?: string): Promise<string>;
}

export interface CallOptions {
  body?: unknown;
  raw?: string | Buffer;
  token?: string;
  headers?: Record<string, string>;
  contentType?: string;
  /** 'manual' to see a redirect instead of following it. */
  redirect?: 'follow' | 'manual' | 'error';
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export const PASSWORD = 'correct horse battery staple';

export function tempDir(t: Test, prefix = 'gatehouse-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Which store the suite runs on: GATEHOUSE_TEST_STORE=postgres runs it on PostgreSQL. */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.GATEHOUSE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * The store flags for one test: SQLite in its temp folder, or a fresh PostgreSQL database with
 * the migrations applied (a copy of a template migrated once per run: helpers/pg.ts).
 */
export async function storeFlags(t: Test, dataDir: string): Promise<Flags> {
  if (TEST_STORE === 'sqlite') return { dataDir };
  // One database per data folder, so a restart on the same folder finds the same store.
  const key = `${dataDir}`;
  let url = dbByDir.get(key);
  if (!url) {
    url = await migratedDatabase(t);
    dbByDir.set(key, url);
  }
  return { dataDir, db: url };
}
const dbByDir = new Map<string, string>();
/** The PostgreSQL database a test's data folder stands for (PostgreSQL runs only). */
export function dbForDir(dataDir: string): string | undefined {
  return dbByDir.get(dataDir);
}

/** Instances of one store (its folder or PostgreSQL URL) share one public URL, as behind a load balancer. */
const publicUrlByStore = new Map<string, string>();

export async function startTestServer(t: Test, flags: Flags = {}, dataDir = tempDir(t), options: { clock?: Clock } = {}): Promise<TestServer> {
  // Cost 4 keeps tests fast; the cost is a setting, the code path is the same.
  const store = await storeFlags(t, dataDir);
  // On SQLite, an empty folder gets a copy of a migrated store (the PostgreSQL database above is one too).
  if (!(flags.db ?? store.db) && flags.dataDir === undefined) await seedSqliteStore(dataDir);
  const storeKey = String(flags.db || store.db || dataDir);
  const shared = publicUrlByStore.get(storeKey);
  const config = loadConfig({ ...store, port: 0, bcryptCost: 4, ...(shared ? { publicUrl: shared } : {}), ...flags }, {});
  const logs: string[] = [];
  const core = await openCore(config, { logger: createLogger((l) => logs.push(l), config.logLevel), clock: options.clock });
  const server = await startServer(core, '127.0.0.1', config.port);
  t.teardown(async () => {
    await server.close();
    await core.close();
  });
  const url = server.url;
  if (!shared) publicUrlByStore.set(storeKey, core.config.publicUrl);

  const call = async (method: string, urlPath: string, o: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = o.contentType ?? (urlPath.startsWith('/api/') ? 'application/vnd.api+json' : 'application/json');
    }
    const res = await fetch(url + urlPath, { method, headers, body, redirect: o.redirect });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };

  const action = (type: string, name: string, attributes: unknown, token?: string) => call('POST', `/action/${type}/${name}`, { body: { attributes }, token });

  const signup = (email: string, password = PASSWORD, token?: string) =>
    action('user_account', 'signup', { email, name: email.split('@')[0], password, passwordConfirm: password }, token);

  const signin = async (email: string, password = PASSWORD) => {
    const r = await action('user_account', 'signin', { email, password });
    if (r.status !== 200) throw new Error(`signin failed: ${r.status} ${r.text}`);
    return tokenOf(r);
  };

  const db = inspectionDb(t, config);
  return { url, core, config: core.config, dataDir, logs, server, db, call, action, signup, signin };
}

export function tokenOf(reply: Reply): string {
  const item = (reply.body as Array<{ ResponseType: string; Attributes: { key?: string; value?: string } }>).find(
    (i) => i.ResponseType === 'client.store.set' && i.Attributes.key === 'token',
  );
  if (!item?.Attributes.value) throw new Error('no token in reply');
  return item.Attributes.value;
}

export function errorCode(reply: Reply): string | undefined {
  if (Array.isArray(reply.body)) return reply.body[0]?.Attributes?.code;
  return reply.body?.errors?.[0]?.code;
}

/** A fresh server whose first account (the administrator) is signed in. */
export async function withAdmin(t: Test, flags: Flags = {}, options: { clock?: Clock } = {}) {
  const s = await startTestServer(t, flags, undefined, options);
  const r = await s.signup('admin@example.com');
  if (r.status !== 200) throw new Error(`admin signup failed: ${r.text}`);
  const adminToken = await s.signin('admin@example.com');
  return { ...s, adminToken };
}

export async function setSignup(s: TestServer, token: string, permission: number) {
  const list = await s.call('GET', '/api/action?filter=signup', { token });
  const id = list.body.data.find((a: { attributes: { action_name: string } }) => a.attributes.action_name === 'signup').id;
  return s.call('PATCH', `/api/action/${id}`, { token, body: { data: { type: 'action', id, attributes: { permission } }, meta: {} } });
}

export async function countRows(s: { db: Knex }, table: string): Promise<number> {
  const r = await s.db(table).count({ n: '*' }).first();
  return Number(r?.n ?? 0);
}
