/** Runs the CLI in-process against a store folder, capturing stdout and stderr. */
import { run } from '../../src/cli/main';
import { serve } from '../../src/serve';
import { dbForDir } from './server';

export interface CliResult {
  code: number;
  out: string;
  err: string;
  json: any;
}

export async function cli(dataDir: string, args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  let out = '';
  let err = '';
  const db = dbForDir(dataDir);
  const code = await run(
    ['node', 'gatehouse', '--data-dir', dataDir, ...(db ? ['--db', db] : []), ...args],
    { serve },
    {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      env: { ...(options.env ?? {}) },
      readStdin: async () => options.stdin ?? '',
    },
  );
  let json: unknown;
  try {
    json = JSON.parse(out);
  } catch {
    json = undefined;
  }
  return { code, out, err, json };
}
