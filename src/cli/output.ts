/** Printing: one JSON document with --json, aligned human text without. */
import { type AppError, messageFor } from '../errors';
import type { Io } from './io';

export function table(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i])))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export function keyValues(pairs: ReadonlyArray<[string, string | number | boolean | null]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${(k + ':').padEnd(width + 1)}  ${v === null ? '-' : String(v)}`).join('\n') + '\n';
}

export function emit(io: Io, json: boolean, doc: unknown, human: () => string): void {
  io.out(json ? JSON.stringify(doc, null, 2) + '\n' : human());
}

/**
 * An error as the shell says it, one line for stderr: `gatehouse: <message>`, or with --json
 * `{"error":{"code","message","reason"}}`, `reason` being the rule that refused, when one did.
 */
export function errorLine(err: AppError, json: boolean): string {
  const message = messageFor(err, 'cli');
  return json ? JSON.stringify({ error: { code: err.code, message, ...(err.reason ? { reason: err.reason } : {}) } }) + '\n' : `gatehouse: ${message}\n`;
}
