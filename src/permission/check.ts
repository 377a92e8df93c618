/**
 * can(principal, op, row): the one permission decision (its SQL twin for lists is
 * store/readable.ts permittedSql; a property test holds them to the same answers).
 * Guest bits apply to every caller; owner bits to the row's owner (never to a guest, even on rows
 * without an owner); group bits to callers who share a group with the row; administrators pass.
 */
import { has, Operation } from './bits';

export interface Principal {
  /** Internal id, or null for a guest (and for the operator at the shell). */
  readonly accountId: number | null;
  readonly referenceId: string | null;
  readonly groupIds: ReadonlySet<number>;
  readonly isAdmin: boolean;
  /**
   * A recovery link's session: it may add a passkey or a password (the actions that say so) and
   * nothing else; no record is hers to read or write through it, and no administration.
   */
  readonly recovering?: true;
}

export const GUEST: Principal = Object.freeze({ accountId: null, referenceId: null, groupIds: new Set<number>(), isAdmin: false });

/** The operator at the shell: passes every permission check, owns nothing. */
export const OPERATOR: Principal = Object.freeze({ accountId: null, referenceId: null, groupIds: new Set<number>(), isAdmin: true });

export interface Guarded {
  readonly permission: number;
  readonly ownerId: number | null;
  /** Groups the row belongs to. */
  readonly groupIds: readonly number[];
}

export function can(principal: Principal, op: Operation, row: Guarded): boolean {
  if (principal.recovering && op !== 'execute') return false;
  if (principal.isAdmin) return true;
  if (has(row.permission, 'guest', op)) return true;
  if (principal.accountId === null) return false;
  if (row.ownerId !== null && row.ownerId === principal.accountId && has(row.permission, 'owner', op)) return true;
  return has(row.permission, 'group', op) && row.groupIds.some((g) => principal.groupIds.has(g));
}

export const isGuest = (p: Principal) => p.accountId === null && !p.isAdmin;

/** The refusal for what a recovery link's session may not do. */
export const RECOVERY_ONLY =
  'a recovery link lets you add a passkey or a password only, within 15 minutes of opening it: add one, then sign in with it to do this';
