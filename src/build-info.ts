/** What this executable is: the version in package.json, and the commit and time scripts/build.mjs records. */
import pkg from '../package.json';

/** Set by scripts/build.mjs in the executable: the commit it was built from and that commit's time. */
declare const GATEHOUSE_BUILD: { commit: string | null; built: string | null } | undefined;

export const VERSION: string = pkg.version;
export const BUILD: { commit: string | null; built: string | null } = typeof GATEHOUSE_BUILD === 'undefined' ? { commit: null, built: null } : GATEHOUSE_BUILD;
