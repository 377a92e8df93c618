/**
 * A SCIM Group's members that are groups: put inside it or taken out through the core's one use
 * case (groups/nesting.ts), in the caller's transaction, which holds lockAccounts. Every rule is
 * the core's (no cycle, depth, nothing inside administrators, users inside nothing); SCIM only
 * names its refusals.
 */
import { AppError, isAppError } from '../errors';
import type { Actor } from '../actor';
import type { Tx } from '../store/connection';
import type { GroupRow } from '../store/groups';
import type { MemberChange } from '../groups/members';
import { changeNestingIn } from '../groups/nesting';

/** What a nesting change did, for auditNesting once the transaction has committed. */
export interface NestingDone {
  group: GroupRow;
  changed: GroupRow[];
  change: MemberChange;
}

/**
 * Puts groups inside `parentReference` or takes them out; undefined when there are none to change.
 * A cycle or a chain too deep is 409 with scimType invalidValue: the request conflicts with the
 * groups as they are (409, as the core says), and what is refused is a member's value. Not
 * `uniqueness`: clients read it as "this resource exists already" and go looking for it to adopt
 * (Gatehouse's own push does, deliveries/scim-push.ts), which a cycle is not.
 */
export async function nestIn(
  tx: Tx,
  actor: Actor,
  parentReference: string,
  childReferences: readonly string[],
  change: MemberChange,
): Promise<NestingDone | undefined> {
  if (childReferences.length === 0) return undefined;
  try {
    const { group, changed } = await changeNestingIn(tx, actor, parentReference, childReferences, change);
    return { group, changed, change };
  } catch (err) {
    if (isAppError(err) && err.code === 'conflict' && err.scimType === undefined) {
      throw new AppError('conflict', err.template, { scimType: 'invalidValue', cause: err });
    }
    throw err;
  }
}
