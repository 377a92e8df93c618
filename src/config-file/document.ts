/**
 * Reading a configuration file: YAML (the `yaml` library, for its line and column of every node,
 * its refusal of duplicate keys and its cap on alias expansion), then the JSON Schema (Ajv). A bad
 * file is one error naming the file, the line and column, and what was expected there. Both
 * libraries load only when a file is read.
 */
import fs from 'node:fs';
import { AppError } from '../errors';
import { CONFIG_SCHEMA, type ConfigDocument } from './schema';

/** At most this much YAML: a configuration, not a data dump. */
const MAX_BYTES = 1024 * 1024;

export interface ParsedConfig {
  doc: ConfigDocument;
  /** "FILE:LINE:COL" of the node at `path` (or of the nearest node above it); with 'key', of its key in the map that holds it. */
  at(path: ReadonlyArray<string | number>, part?: 'key'): string;
}

let validator: ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string; params: Record<string, unknown> }> | null };

async function validate(data: unknown) {
  if (!validator) {
    const { default: Ajv } = await import('ajv');
    validator = new Ajv({ allErrors: false, strict: true }).compile(CONFIG_SCHEMA) as typeof validator;
  }
  return validator(data) ? null : (validator.errors?.[0] ?? null);
}

/**
 * A configuration file's text: a regular file of at most MAX_BYTES, in UTF-8 (a byte that is not
 * is refused, never read as something else). Errors name the file.
 */
export function readConfigText(file: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw new AppError('not_found', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new AppError('invalid_input', `${file} is not a file`);
    if (stat.size > MAX_BYTES) throw new AppError('invalid_input', `${file}: larger than ${MAX_BYTES / 1024} KiB`);
    const bytes = fs.readFileSync(fd);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new AppError('invalid_input', `${file}: not UTF-8 text`);
    }
  } finally {
    fs.closeSync(fd);
  }
}

export async function parseConfig(text: string, file: string): Promise<ParsedConfig> {
  if (Buffer.byteLength(text) > MAX_BYTES) throw new AppError('invalid_input', `${file}: larger than ${MAX_BYTES / 1024} KiB`);
  const { LineCounter, parseDocument, isNode, isMap, isScalar } = await import('yaml');
  const lines = new LineCounter();
  const yaml = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, strict: true, version: '1.2' });
  const where = (offset: number) => {
    const p = lines.linePos(offset);
    return `${file}:${p.line}:${p.col}`;
  };
  // A warning (an unknown tag such as !foo, read as if it were not there) is refused too: the file
  // says one thing, so it must be read as exactly that.
  const first = yaml.errors[0] ?? yaml.warnings[0];
  if (first) {
    const said = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    const message = /multiple documents/i.test(said) ? 'a configuration file is one YAML document (no second ---)' : said;
    throw new AppError('invalid_input', `${where(first.pos[0])}: ${message}`);
  }
  let data: unknown;
  try {
    // Aliases may not expand past a few times the document's own size (the "billion laughs").
    data = yaml.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new AppError('invalid_input', `${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const at = (path: ReadonlyArray<string | number>, part?: 'key') => {
    const last = path[path.length - 1];
    if (part === 'key' && typeof last === 'string') {
      const holder = yaml.getIn(path.slice(0, -1), true);
      const key = isMap(holder) ? holder.items.find((p) => isScalar(p.key) && p.key.value === last)?.key : undefined;
      if (isNode(key) && key.range) return where(key.range[0]);
    }
    for (let n = path.length; n >= 0; n--) {
      const node = yaml.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) return where(node.range[0]);
    }
    return `${file}:1:1`;
  };
  const error = await validate(data);
  if (error) {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    const extra = error.params.additionalProperty ?? error.params.missingProperty;
    const named =
      path.length === 0
        ? 'the file'
        : path
            .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
            .join('')
            .replace(/^\./, '');
    const target = error.params.additionalProperty !== undefined ? [...path, String(error.params.additionalProperty)] : path;
    throw new AppError(
      'invalid_input',
      `${at(target, error.params.additionalProperty !== undefined ? 'key' : undefined)}: ${named} ${error.message}${extra !== undefined ? ` (${String(extra)})` : ''}`,
    );
  }
  return { doc: data as ConfigDocument, at };
}
