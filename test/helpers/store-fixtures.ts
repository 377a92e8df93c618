/** The stores of earlier schemas (test/fixtures/stores, made by scripts/store-fixtures.ts) and what every upgrade of one must read back. */
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Test } from 'tap';
import type { CliResult } from './cli';

export const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'stores');
export const manifest: { password: string; fixtures: Array<{ file: string; schema: string; rows: Record<string, number> }> } = JSON.parse(
  fs.readFileSync(path.join(FIXTURES, 'manifest.json'), 'utf8'),
);

export type Row = Record<string, unknown>;

/** Whether a fixture's invitation (if it holds one) has not expired by now. */
export async function invitationOpenIn(file: string): Promise<boolean> {
  const tables = await storeTables(file);
  if (!tables.includes('invitation')) return true;
  const rows = await query<{ expires_at: number }>(file, 'SELECT expires_at FROM invitation');
  return rows.some((r) => Number(r.expires_at) > Date.now());
}

/** One read-only query of a SQLite file. */
export async function query<T = Row>(file: string, sql: string): Promise<T[]> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

/** A SQLite store's own tables (not SQLite's, knex's or the full-text index's), in the order they were made. */
export const storeTables = async (file: string): Promise<string[]> =>
  (
    await query<{ name: string }>(
      file,
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'knex\\_%' ESCAPE '\\' AND name NOT LIKE '%\\_fts%' ESCAPE '\\' ORDER BY rowid`,
    )
  ).map((r) => r.name);

/**
 * After the migration, the commands read back what the fixture held: every account, the group
 * and its member, and each thing whose table the fixture's schema had (`rows(table)`: how many
 * rows it held, null when the table did not exist yet).
 */
export async function readsEverything(
  t: Test,
  gatehouse: (args: string[]) => Promise<CliResult>,
  rows: (table: string) => number | null,
  /** The fixture's invitation is still open today (it was made to last 7 days, from the day the fixture was made). */
  invitationOpen = true,
): Promise<void> {
  const has = (table: string) => rows(table) !== null;
  const json = async (args: string[]) => {
    const r = await gatehouse(['--json', ...args]);
    t.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    return r.json;
  };
  const emails = JSON.stringify(await json(['user', 'list']));
  for (const email of ['admin@example.com', 'bob@example.com', 'carol@example.com', 'erin@example.com']) t.match(emails, email, `account ${email}`);
  t.match(JSON.stringify(await json(['group', 'show', 'staff'])), 'bob@example.com', 'the group and its member');
  if (has('oidc_client')) t.match(JSON.stringify(await json(['client', 'list'])), '"Wiki"', 'the OpenID Connect client');
  if (has('signing_key')) t.equal(JSON.stringify(await json(['keys', 'list'])).match(/"kid"/g)?.length, rows('signing_key'), 'every signing key');
  if (has('passkey')) t.match(JSON.stringify(await json(['user', 'passkeys', 'bob@example.com'])), 'laptop', 'the passkey');
  if (has('app_password')) t.match(JSON.stringify(await json(['user', 'app-password', 'list', 'bob@example.com'])), 'nextcloud', 'the app password');
  if (has('api_key')) t.match(JSON.stringify(await json(['user', 'api-key', 'list', 'admin@example.com'])), '"script"', 'the API key');
  if (has('delivery')) {
    const queued = (await json(['deliveries'])).deliveries as unknown[];
    t.equal(queued.length, rows('delivery'), 'every queued delivery');
  }
  if (has('webhook')) t.match(JSON.stringify(await json(['webhook', 'list'])), 'hooks.example.com', 'the webhook');
  if (has('forward_app')) t.match(JSON.stringify(await json(['app', 'list'])), 'files.example.com', 'the protected app');
  if (has('invitation')) {
    const listed = JSON.stringify(await json(['user', 'invitations']));
    if (invitationOpen) t.match(listed, 'dora@example.com', 'the invitation');
    else t.notMatch(listed, 'dora@example.com', 'the invitation, expired since the fixture was made, is not listed as open');
  }
  if (has('upstream_provider')) t.match(JSON.stringify(await json(['provider', 'list'])), '"corp"', 'the provider');
  if (has('scim_target')) t.match(JSON.stringify(await json(['scim', 'target', 'list'])), 'app.example.com', 'the SCIM push target');
  if (has('saml_sp')) t.match(JSON.stringify(await json(['saml', 'sp', 'list'])), 'wiki.example.com', 'the SAML service provider');
  if (has('scim_token')) t.match(JSON.stringify(await json(['scim', 'token', 'list'])), '"okta"', 'the SCIM token');
  t.equal((await gatehouse(['stats'])).code, 0);
}
