/**
 * JSON-lines logger. Callers pass explicit fields; nothing here inspects request bodies or
 * headers, so a secret can only reach a log if a caller hands it over (tests grep for that).
 *
 * Lines are gathered and written once per event-loop turn: stdout to a pipe is synchronous on
 * Linux, and one write per request would cost a syscall on the request path under load.
 */
import type { LogLevel } from './config';

export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

/** Every logger's flush, run once at exit so no line is lost. */
const flushers = new Set<() => void>();
let exitHooked = false;

let stdoutBroken = false;
let stdoutWatched = false;
/**
 * Writes to stdout until its reader goes away (`serve | head -1`, `gatehouse group list | head
 * -5`): the EPIPE then ends what is written, never the process (an 'error' event with no
 * listener would kill it with a stack trace). The log and the shell's output (cli/io.ts) both
 * write through here.
 */
export function writeStdout(text: string): void {
  if (!stdoutWatched) {
    stdoutWatched = true;
    process.stdout.on('error', () => {
      stdoutBroken = true;
    });
  }
  if (!stdoutBroken) process.stdout.write(text);
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };
const noop = () => {};

/** `level`: lines below it are dropped before they are built (--log-level). */
export function createLogger(write: (text: string) => void = writeStdout, level: LogLevel = 'info'): Logger {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    write(text);
  };
  flushers.add(flush);
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', () => flushers.forEach((f) => f()));
  }
  const emit = (level: string, event: string, fields: LogFields = {}) => {
    pending.push(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }) + '\n');
    if (pending.length >= 256) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const at = (l: Exclude<LogLevel, 'silent'>) => (RANK[l] >= RANK[level] ? (event: string, fields?: LogFields) => emit(l, event, fields) : noop);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
