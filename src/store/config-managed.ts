/** The objects a configuration file manages (config_managed), by kind and name. */
import { op } from './handle';

export type ManagedKind = 'look' | 'group' | 'action' | 'oidc_client' | 'saml_sp' | 'forward_app' | 'provider' | 'webhook' | 'scim_target';

/** Names whose case is meaningful (an entity id, a URL) are kept as given; the others are compared in lower case. */
const CASE_KEPT: ReadonlySet<ManagedKind> = new Set(['saml_sp', 'webhook']);

/** config_managed's key of an object of a kind. */
export const managedKey = (kind: ManagedKind, name: string): string => (CASE_KEPT.has(kind) ? name : name.toLowerCase());

/** What config_managed holds of one object: its file, whether an apply made it, the references the file gave it. */
export interface ManagedEntry {
  file: string;
  made: boolean;
  /** The secret references the file gave, by the entry's key (`{env: NAME}` or `{file: PATH}`); null: none recorded. */
  refs: Readonly<Record<string, unknown>> | null;
}

/** The managed names of a kind, with the file each came from, whether an apply made it (or took it over), and its references. */
export const managedNames = op(async (h, kind: ManagedKind): Promise<Map<string, ManagedEntry>> => {
  const rows = await h.all('SELECT name, file, made, refs FROM config_managed WHERE kind = ?', [kind]);
  return new Map(
    rows.map((r) => [
      String(r.name),
      {
        file: String(r.file),
        made: r.made === true || Number(r.made) === 1,
        refs: r.refs === null || r.refs === undefined ? null : (JSON.parse(String(r.refs)) as Record<string, unknown>),
      },
    ]),
  );
});

/** Every managed object: kind, key and file (the console labels them). */
export const allManaged = op(async (h): Promise<Array<{ kind: ManagedKind; name: string; file: string }>> =>
  (await h.all('SELECT kind, name, file FROM config_managed', [])).map((r) => ({
    kind: String(r.kind) as ManagedKind,
    name: String(r.name),
    file: String(r.file),
  })),
);

/** The file that manages one object, or null. */
export const managingFile = op(async (h, kind: ManagedKind, name: string): Promise<string | null> => {
  const rows = await h.all('SELECT file FROM config_managed WHERE kind = ? AND name = ?', [kind, name]);
  return rows.length === 0 ? null : String(rows[0].file);
});

/**
 * Records that `file` manages an object; `made`: an apply made it (kept as first recorded when the
 * row exists); `refs`: the secret references the file gave it (replacing those recorded).
 */
export const markManaged = op(
  async (h, kind: ManagedKind, name: string, file: string, made: boolean, refs: Readonly<Record<string, unknown>> | null = null): Promise<void> => {
    const json = refs === null ? null : JSON.stringify(refs);
    await h
      .k('config_managed')
      .insert({ kind, name, file, applied_at: h.clock.now(), made, refs: json })
      .onConflict(['kind', 'name'])
      .merge({ file, applied_at: h.clock.now(), refs: json });
  },
);

export const unmarkManaged = op(async (h, kind: ManagedKind, name: string): Promise<void> => {
  await h.k('config_managed').where({ kind, name }).del();
});
