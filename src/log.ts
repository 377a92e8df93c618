/**
 * JSON-lines logger. Callers pass explicit fields; nothing here inspects request bodies or
 * headers, so a secret can only reach a log if a caller hands it over (tests grep for that).
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

export function createLogger(write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const emit = (level: string, event: string, fields: LogFields = {}) => {
    write(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }) + '\n');
  };
  return {
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, fields) => emit('error', event, fields),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
