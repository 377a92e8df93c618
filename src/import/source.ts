/**
 * What every format is read into: people (as the file says them, not yet validated) and the
 * groups they name. The readers (csv.ts, authelia.ts, auth0.ts, keycloak.ts) only read; the rules
 * (addresses, names, hashes, duplicates) are applied once, in plan.ts.
 */
import { AppError } from '../errors';
import type { AccountOrigin } from '../store/accounts';

/** Each format is also the origin of the accounts it makes (store/accounts.ts ACCOUNT_ORIGINS). */
export const IMPORT_FORMATS = ['keycloak', 'authelia', 'auth0', 'csv'] as const satisfies readonly AccountOrigin[];
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface SourcePerson {
  /** Where it is in the file, for the report: "line 3", "user ann". */
  at: string;
  email: unknown;
  name?: unknown;
  username?: unknown;
  /** Keys of SourceGroups. */
  groups: string[];
  /** As the file has it; empty or absent: no password. */
  passwordHash?: unknown;
  disabled: boolean;
  emailVerified: boolean;
  /** Found while reading (a credential of an unknown kind): the person is skipped for it. */
  problem?: string;
}

export interface SourceGroup {
  /** How people name it (a Keycloak path, else the name). */
  key: string;
  name: string;
  /** The key of the group it sits in (Keycloak's subgroups), else null. */
  parent: string | null;
}

export interface Source {
  people: SourcePerson[];
  groups: SourceGroup[];
}

/** The whole file is refused (not one person): its shape is not the format's. */
export const badFile = (format: ImportFormat, why: string): AppError => new AppError('invalid_input', `this is not ${articleFor(format)} file: ${why}`);

const articleFor = (format: ImportFormat) =>
  ({ keycloak: 'a Keycloak realm export', authelia: "an Authelia users' database", auth0: 'an Auth0 user export (NDJSON)', csv: 'an import CSV' })[format];

/** The groups people name, each once (formats without a tree of groups). */
export function flatGroups(people: readonly SourcePerson[]): SourceGroup[] {
  const seen = new Map<string, SourceGroup>();
  for (const p of people) for (const g of p.groups) if (!seen.has(g)) seen.set(g, { key: g, name: g, parent: null });
  return [...seen.values()];
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value the file gives as a boolean (or leaves out: `absent`). */
export const flag = (v: unknown, absent: boolean): boolean => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : absent);
