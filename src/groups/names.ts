/**
 * Group names that a person cannot tell apart count as one name. Managed groups (see
 * store/groups.ts managedGroupSql) are what client gates, the `groups` claim and forward-auth
 * rules name, so no group may take a name that looks like a managed group's: not in another
 * case, not with invisible characters, not with Cyrillic or Greek look-alike letters, not by
 * renaming an account's dedicated group. Ordinary accounts may still share names among their own
 * groups ("team"): those never decide access.
 */
import { AppError } from '../errors';
import type { Tx } from '../store/connection';
import { managedGroups } from '../store/groups';

/**
 * Letters that look like Latin ones (after lower-casing), from Unicode's confusables data
 * (UTS #39) for the scripts a group name is most likely spoofed with, plus the digits and
 * marks that pass for letters in most fonts.
 */
const LOOK_ALIKES: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  һ: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  п: 'n',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ӏ: 'l',
  ɡ: 'g',
  ɑ: 'a',
  ı: 'i',
  ſ: 's',
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ϲ: 'c',
  ϳ: 'j',
  '0': 'o',
  '1': 'l',
  '|': 'l',
  '!': 'l',
  '5': 's',
  $: 's',
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join('')}]`, 'gu');
/** Invisible characters: format controls (zero-width space and joiners, bidi marks, soft hyphen) and Hangul fillers; marks (variation selectors, the grapheme joiner) go with the accents. */
const INVISIBLE = /[\p{Cf}\u115f\u1160\u3164]/gu;
/** Dashes, underscores, dots and spaces of every kind read as one separator. */
const SEPARATOR = /[\p{Pd}\p{Zs}_.\u2010-\u2015\u2212]+/gu;

/** The form of a group name that look-alikes share. */
export function groupNameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(INVISIBLE, '')
    .replace(/\p{M}/gu, '') // accents: "gráfana" reads as "grafana"
    .toLowerCase()
    .replace(LOOK_ALIKE, (c) => LOOK_ALIKES[c])
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(SEPARATOR, '-')
    .replace(/^-|-$/g, '');
}

/**
 * Refuses a name (for a new group, or a rename of `selfId`) that looks like a managed group's.
 * Inside the caller's transaction, so two concurrent creations cannot both pass.
 */
export async function assertGroupNameFree(tx: Tx, name: string, selfId: number | null, known?: GroupNameIndex): Promise<void> {
  const key = groupNameKey(name);
  const clash = known ? known.get(key) : (await managedGroups(tx)).find((g) => g.id !== selfId && groupNameKey(g.name) === key);
  if (clash) {
    const same = clash.name.toLowerCase() === name.toLowerCase();
    throw new AppError('name_taken', same ? `a group named ${clash.name} exists` : `the name ${name} looks too much like the group ${clash.name}`);
  }
}

/** The managed groups by the key of their name, read once for a caller that makes many groups in one transaction (a configuration file). */
export type GroupNameIndex = Map<string, { name: string }>;

export async function groupNameIndex(tx: Tx): Promise<GroupNameIndex> {
  return new Map((await managedGroups(tx)).map((g) => [groupNameKey(g.name), { name: g.name }]));
}
