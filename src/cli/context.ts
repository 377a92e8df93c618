/** Shared by the commands: global flags → config → one core, closed when the command ends. */
import type { Command } from 'commander';
import { Flags, loadConfig, settingOptions } from '../config';
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
 * Opens the core for one command. Only the commands that make a store (`bootstrap-admin`,
 * `migrate`; `serve` opens its own) may find none: for any other, a data directory without a
 * store is a mistyped path, and making an empty store there would answer "no accounts" (exit 4).
 */
export async function withCore<T>(cmd: Command, io: Io, fn: (core: Core) => Promise<T>, o: { createsStore?: boolean } = {}): Promise<T> {
  // Every setting of the global scope counts for an admin command (--data-dir, --db,
  // --webhook-allow-private); the server's own settings do not.
  const given = globalFlags(cmd);
  const flags: Flags = {};
  for (const { key } of settingOptions('global')) if (given[key] !== undefined) flags[key] = given[key];
  const config = loadConfig(flags, io.env);
  if (!o.createsStore) assertStoreExists(config);
  const core = await openCore(config, { logger: silentLogger });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}
