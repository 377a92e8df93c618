/**
 * The apps behind reverse proxies (forward authentication), and the one statement a forward-auth
 * request needs besides the token's facts: the host's apps, the account's name and managed
 * groups, and whether its session passed a second factor. It rides along in the facts statement
 * (request-facts.ts), so a request costs one round trip to the store and no write.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors';
import { op, open, Tx } from './handle';
import { decodeRow } from './schema';
import { managedGroupSql } from './groups';
import { memberGroupsSql } from './nesting';
import { jsonRows, parsedRows, type Ride } from './request-facts';

export interface AppRow {
  id: number;
  reference_id: string;
  host: string;
  paths: string;
  allowed_groups: string;
  bypass_paths: string;
  two_factor: boolean;
  created_at: number;
}

export interface NewApp {
  host: string;
  paths: readonly string[];
  allowedGroups: readonly string[];
  bypassPaths: readonly string[];
  twoFactor: boolean;
}

export const insertApp = op(async (h, app: NewApp): Promise<AppRow> => {
  const row = {
    reference_id: randomUUID(),
    host: app.host,
    paths: JSON.stringify(app.paths),
    allowed_groups: JSON.stringify(app.allowedGroups),
    bypass_paths: JSON.stringify(app.bypassPaths),
    two_factor: app.twoFactor,
    created_at: h.clock.now(),
  };
  await h.k('forward_app').insert(row);
  return decodeRow<AppRow>('forward_app', (await h.k('forward_app').where({ reference_id: row.reference_id }).first())!);
});

export const listApps = op(async (h): Promise<AppRow[]> =>
  ((await h.k('forward_app').orderBy([{ column: 'host' }, { column: 'id' }])) as Record<string, unknown>[]).map((r) => decodeRow<AppRow>('forward_app', r)),
);

export const findApp = op(async (h, referenceId: string): Promise<AppRow | undefined> => {
  const row = await h.k('forward_app').where({ reference_id: referenceId.toLowerCase() }).first();
  return row ? decodeRow<AppRow>('forward_app', row) : undefined;
});

export const findAppsByHost = op(async (h, host: string): Promise<AppRow[]> =>
  ((await h.k('forward_app').where({ host }).orderBy('id')) as Record<string, unknown>[]).map((r) => decodeRow<AppRow>('forward_app', r)),
);

/** Sets who may open an app, its bypass paths and whether it needs a second factor (its host and paths are what it is). */
export const updateApp = op(async (h, id: number, app: Pick<NewApp, 'allowedGroups' | 'bypassPaths' | 'twoFactor'>): Promise<void> => {
  await h
    .k('forward_app')
    .where({ id })
    .update({ allowed_groups: JSON.stringify(app.allowedGroups), bypass_paths: JSON.stringify(app.bypassPaths), two_factor: app.twoFactor });
});

export const deleteApp = op(async (h, id: number): Promise<void> => {
  const n = await h.k('forward_app').where({ id }).del();
  if (n === 0) throw new AppError('not_found', 'the app no longer exists');
});

/** What a forward-auth decision reads, besides the token's facts. */
export interface ForwardFacts {
  apps: Array<{ referenceId: string; paths: string[]; allowedGroups: string[]; bypassPaths: string[]; twoFactor: boolean }>;
  account: { email: string; name: string } | null;
  /** The account's managed groups (the only ones a rule or a Remote-Groups header may name). */
  groups: Array<{ referenceId: string; name: string }>;
  sessionTwoFactor: boolean;
  /** The session was opened by a recovery link: it answers no app. */
  sessionRecovery: boolean;
}

const strings = (json: unknown): string[] => {
  const v = JSON.parse(String(json)) as unknown;
  return Array.isArray(v) ? v.map(String) : [];
};

/** The forward-auth facts for a host and (when a token names them) an account and its session. */
export function forwardRide(tx: Tx, host: string, subject: { referenceId: string; sid: string | null } | null): Ride<ForwardFacts> {
  const parts = [
    `SELECT 'app' AS kind, f.reference_id AS a, f.paths AS b, f.allowed_groups AS c, f.bypass_paths AS d, CAST(f.two_factor AS INTEGER) AS e
       FROM forward_app f WHERE f.host = ?`,
  ];
  const params: unknown[] = [host];
  if (subject) {
    parts.push(
      `SELECT 'acct', u.email, u.name, NULL, NULL, CAST(NULL AS INTEGER) FROM user_account u WHERE u.reference_id = ?`,
      `SELECT 'grp', g.reference_id, g.name, NULL, NULL, CAST(NULL AS INTEGER)
         FROM usergroup g JOIN user_account u ON u.reference_id = ?
         WHERE g.id IN (${memberGroupsSql('u.id')}) AND ${managedGroupSql('g')}`,
      `SELECT 'sess', s.method, NULL, NULL, NULL, CAST(s.two_factor AS INTEGER) FROM session s WHERE s.id = ?`,
    );
    params.push(subject.referenceId, subject.referenceId, subject.sid ?? '');
  }
  return {
    sql: jsonRows(open(tx), parts.join('\nUNION ALL\n'), ['kind', 'a', 'b', 'c', 'd', 'e']),
    params,
    decode: async (json) => {
      const facts: ForwardFacts = { apps: [], account: null, groups: [], sessionTwoFactor: false, sessionRecovery: false };
      for (const r of parsedRows(json)) {
        if (r.kind === 'app')
          facts.apps.push({
            referenceId: String(r.a),
            paths: strings(r.b),
            allowedGroups: strings(r.c),
            bypassPaths: strings(r.d),
            twoFactor: Number(r.e) === 1,
          });
        else if (r.kind === 'acct') facts.account = { email: String(r.a), name: String(r.b ?? '') };
        else if (r.kind === 'grp') facts.groups.push({ referenceId: String(r.a), name: String(r.b) });
        else if (r.kind === 'sess') {
          facts.sessionTwoFactor = Number(r.e) === 1;
          facts.sessionRecovery = r.a === 'recovery';
        }
      }
      facts.groups.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return facts;
    },
  };
}
