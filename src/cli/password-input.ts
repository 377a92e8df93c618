/**
 * Passwords never come as argument values (they would show in process lists and shell history):
 * exactly one of --password-stdin, --password-file F, --password-env VAR.
 */
import fs from 'node:fs';
import { Command, Option } from 'commander';
import { AppError } from '../errors';
import type { Io } from './io';

export interface PasswordFlags {
  passwordStdin?: boolean;
  passwordFile?: string;
  passwordEnv?: string;
}

export function addPasswordOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--password-stdin', 'read the password from standard input'))
    .addOption(new Option('--password-file <file>', 'read the password from a file'))
    .addOption(new Option('--password-env <var>', 'read the password from an environment variable'));
}

/**
 * An environment variable a flag names, or undefined: only the environment's own variables, so
 * `--password-env constructor` is "not set" rather than what every object inherits.
 */
export const envVariable = (io: Io, name: string): string | undefined => (Object.hasOwn(io.env, name) ? io.env[name] : undefined);

/** One trailing newline (from echo or a file) is not part of the password. */
const chomp = (s: string) => s.replace(/\r?\n$/, '');

export async function readPassword(flags: PasswordFlags, io: Io): Promise<string> {
  const given = [flags.passwordStdin, flags.passwordFile, flags.passwordEnv].filter((v) => v !== undefined && v !== false);
  if (given.length !== 1) throw new AppError('invalid_input', 'give the password with exactly one of --password-stdin, --password-file or --password-env');
  if (flags.passwordStdin) return chomp(await io.readStdin());
  if (flags.passwordFile !== undefined) {
    try {
      return chomp(fs.readFileSync(flags.passwordFile, 'utf8'));
    } catch {
      throw new AppError('invalid_input', `cannot read the password file ${flags.passwordFile}`);
    }
  }
  const value = envVariable(io, flags.passwordEnv!);
  if (value === undefined) throw new AppError('invalid_input', `the environment variable ${flags.passwordEnv} is not set`);
  return value;
}
