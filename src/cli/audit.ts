/** `gatehouse audit [--since 24h|2026-11-01T00:00:00Z] [--account <email>] [--limit N]` */
import type { Command } from 'commander';
import { AppError } from '../errors';
import { parseDuration } from '../config';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, table } from './output';

function parseSince(raw: string): number {
  if (/^\d+\s*[smhd]?$/.test(raw.trim())) return Date.now() - parseDuration(raw, '--since') * 1000;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw new AppError('invalid_input', '--since must be a duration (30m, 24h, 7d) or an ISO date');
  return t;
}

/** The table shows an account's id by its first 8 characters; `--json` gives it whole. */
function shortId(id: string): string {
  return id.length > 9 ? `${id.slice(0, 8)}…` : id;
}

export function registerAudit(program: Command, io: Io): void {
  program
    .command('audit')
    .description('security events: signins, lockouts, TOTP replays, permission changes, bootstrap, revocations')
    .option('--since <when>', 'only events since a duration ago (24h) or an ISO date')
    .option('--account <email>', "only this account's events")
    .option('--limit <n>', 'at most this many (the newest), default 100')
    .action(async (opts: { since?: string; account?: string; limit?: string }, c: Command) => {
      const since = opts.since === undefined ? undefined : parseSince(opts.since);
      if (opts.limit !== undefined && !/^\d{1,6}$/.test(opts.limit)) throw new AppError('invalid_input', '--limit must be a whole number');
      const limit = opts.limit === undefined ? 100 : Math.max(1, Number(opts.limit));
      await withCore(c, io, async (core) => {
        const events = await core.audit.query(core.shell, { since, accountEmail: opts.account, limit });
        const doc = events.map((e) => ({
          time: new Date(e.created_at).toISOString(),
          event: e.event,
          account: e.account,
          client: e.client,
          details: e.details,
        }));
        emit(io, wantsJson(c), { events: doc }, () =>
          table([
            ['TIME', 'EVENT', 'ACCOUNT', 'CLIENT', 'DETAILS'],
            ...doc.map((e) => [
              e.time,
              e.event,
              e.account === null ? '-' : shortId(e.account),
              e.client ?? '-',
              Object.entries(e.details)
                .map(([k, v]) => `${k}=${v}`)
                .join(' '),
            ]),
          ]),
        );
      });
    });
}
