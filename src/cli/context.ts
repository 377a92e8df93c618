/** Shared by the commands: global flags → config → one core, closed when the command ends. */
import type { Command } from 'commander';
import { Config, Flags, loadConfig, settingOptions } from '../config';
import { assertStoreExists, Core, openCore } from '../core';
import { silentLogger } from '../log';
import type { Io } from './io';

export type GlobalFlags = Flags & { json?: boolean };

export function globalFlags(cmd: Command): GlobalFlags {
  return cmd.optsWithGlobals() as GlobalFlags;
}

export function wantsJson(cmd: Command): boolean {
  return globalFlags(cmd).json === true;
}

/**
 * An admin command's settings: every setting of the global scope counts (the data directory, the
 * database, private webhook targets); the server's own settings do not.
 */
export function storeConfig(cmd: Command, io: Io): Config {
  const given = globalFlags(cmd);
  const flags: Flags = {};
  for (const { key } of settingOptions('global')) if (given[key] !== undefined) flags[key] = given[key];
  return loadConfig(flags, io.env);
}

/**
 * Opens the core for one command. Only the commands that make a store (`bootstrap-admin`,
 * `migrate`; `serve` opens its own) may find none: for any other, a data directory without a
 * store is a mistyped path, and making an empty store there would answer "no accounts" (exit 4).
 */
export async function withCore<T>(cmd: Command, io: Io, fn: (core: Core) => Promise<T>, o: { createsStore?: boolean } = {}): Promise<T> {
  const config = storeConfig(cmd, io);
  if (!o.createsStore) assertStoreExists(config);
  const core = await openCore(config, { logger: silentLogger });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}
