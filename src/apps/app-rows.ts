/** An app as it is stored, from what the shell or a configuration file gives, and the name a file gives it. */
import { AppError } from '../errors';
import { resolveGateGroup } from '../groups/manage';
import type { NewApp } from '../store/apps';
import type { Tx } from '../store/connection';
import { normalHost, parsePrefix } from './rules';

/** An app as the shell or a file gives it. */
export interface NewAppInput {
  host: string;
  paths?: readonly string[];
  allowedGroups?: readonly string[];
  twoFactor?: boolean;
  bypassPaths?: readonly string[];
}

const unique = <T>(xs: readonly T[]) => [...new Set(xs)];

/**
 * An app as it would be stored, from what the shell or a configuration file gives: the host and
 * path prefixes normalised, the allowed groups resolved (managed ones only: a group any account
 * can make and name proves nothing, the same rule as OIDC client gates). Writes nothing.
 */
export async function appRowOf(tx: Tx, input: NewAppInput): Promise<NewApp> {
  const host = normalHost(input.host);
  if (host === null) throw new AppError('invalid_input', `{--host} takes a host name like app.example.com (no scheme, no port), got "${input.host}"`);
  const paths = unique((input.paths ?? []).map((p) => parsePrefix(p, '{--path}')));
  const bypassPaths = unique((input.bypassPaths ?? []).map((p) => parsePrefix(p, '{--bypass-path}')));
  const groups = [];
  for (const g of unique(input.allowedGroups ?? [])) groups.push(await resolveGateGroup(tx, g));
  return { host, paths, allowedGroups: groups.map((g) => g.reference_id), bypassPaths, twoFactor: input.twoFactor === true };
}

/** The name an app goes by in a configuration file: its host, then its path prefixes. */
export const appKey = (app: { host: string; paths: readonly string[] }) => [app.host, ...[...app.paths].sort()].join(' ');
