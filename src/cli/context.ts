/** Shared by the commands: global flags → config → one core, closed when the command ends. */
import type { Command } from 'commander';
import { Flags, loadConfig } from '../config';
import { Core, openCore } from '../core';
import { silentLogger } from '../log';
import type { Io } from './io';

export type GlobalFlags = Flags & { json?: boolean };

export function globalFlags(cmd: Command): GlobalFlags {
  return cmd.optsWithGlobals() as GlobalFlags;
}

export function wantsJson(cmd: Command): boolean {
  return globalFlags(cmd).json === true;
}

export async function withCore<T>(cmd: Command, io: Io, fn: (core: Core) => Promise<T>): Promise<T> {
  const { dataDir, db } = globalFlags(cmd);
  const core = await openCore(loadConfig({ dataDir, db }, io.env), { logger: silentLogger });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}
