/**
 * GitHub teams kept in managed groups (contract section 26): at each sign-in through a GitHub
 * provider, the person joins every group one of their teams maps to (`--team-group
 * ORG/TEAM=GROUP`) and leaves every other group the provider maps, so a team left on GitHub is a
 * group left here at the next sign-in. Only the groups the provider names are touched; a group
 * removed since is passed over. The groups' own rules hold (groups/members.ts: a directory
 * source's group refuses), written as the operator (the person may not change memberships), one
 * transaction under the memberships' lock, audited once it has committed.
 */
import type { Actor } from '../actor';
import { OPERATOR } from '../permission/check';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { lockAccounts } from '../store/accounts';
import type { ProviderRow } from '../store/upstream';
import type { AuditEntry } from '../audit';
import { managedGroupNamed } from '../groups/manage';
import { memberEvents, membershipWriter } from '../groups/members';
import { githubSettings } from './providers';

export async function keepTeamGroups(
  s: Services,
  actor: Actor,
  provider: ProviderRow,
  account: AccountRow,
  teams: readonly string[] | undefined,
): Promise<void> {
  if (provider.kind !== 'github' || teams === undefined) return;
  const map = githubSettings(provider).team_groups;
  if (map.length === 0) return;
  const mine = new Set(teams);
  // A group several teams map to: in it when in any of them.
  const wanted = new Map<string, boolean>();
  for (const t of map) wanted.set(t.group.toLowerCase(), (wanted.get(t.group.toLowerCase()) ?? false) || mine.has(`${t.org}/${t.team}`));
  const writer: Actor = { ...actor, principal: OPERATOR };
  const events = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const members = membershipWriter(tx, writer);
    const out: AuditEntry[] = [];
    for (const [name, inIt] of wanted) {
      const group = await managedGroupNamed(tx, name);
      if (!group) continue;
      const change = inIt ? 'add' : 'remove';
      out.push(...memberEvents(group, await members(group, [account], change), change));
    }
    return out;
  });
  if (events.length > 0) await s.audit.recordAll(writer, events);
}
