/**
 * The operator's look as the store keeps it (a configuration file's `look:`, the console's
 * settings page): one gatehouse_setting row per setting, `look.<key>`, and `look.version`, the
 * time of the last change (the pages' asset links carry it, so a browser fetches a changed
 * stylesheet at once). The logo is kept as `<type>;base64,<bytes>`, checked before it is written.
 */
import { op } from './handle';

export const LOOK_KEYS = ['brand_name', 'brand_color', 'default_language', 'brand_logo', 'brand_css'] as const;
export type LookKey = (typeof LOOK_KEYS)[number];

/** Enough of each row for a page: the logo's and the stylesheet's first bytes only (the logo's type; whether there is one). */
export const readLookHeads = op(async (h): Promise<Map<string, string>> => {
  const rows = await h.all("SELECT name, substr(value, 1, 64) AS value FROM gatehouse_setting WHERE name LIKE 'look.%'", []);
  return new Map(rows.map((r) => [String(r.name).slice('look.'.length), String(r.value)]));
});

/** One setting's whole value, or null. */
export const readLook = op(async (h, key: LookKey): Promise<string | null> => {
  const row = await h
    .k('gatehouse_setting')
    .where({ name: `look.${key}` })
    .first('value');
  return (row?.value as string | undefined) ?? null;
});

/** Sets (null: removes) one setting, and marks the look changed. */
export const writeLook = op(async (h, key: LookKey, value: string | null): Promise<void> => {
  if (value === null)
    await h
      .k('gatehouse_setting')
      .where({ name: `look.${key}` })
      .del();
  else
    await h
      .k('gatehouse_setting')
      .insert({ name: `look.${key}`, value })
      .onConflict('name')
      .merge();
  await h
    .k('gatehouse_setting')
    .insert({ name: 'look.version', value: String(h.clock.now()) })
    .onConflict('name')
    .merge();
});
