/**
 * The 21-bit permission integer: three groups of seven bits.
 *   guest ×1, owner ×128, group ×16384; bits peek, read, create, update, delete, execute, refer.
 */
import { AppError } from '../errors';

export const OPERATIONS = ['peek', 'read', 'create', 'update', 'delete', 'execute', 'refer'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const SCOPES = ['guest', 'owner', 'group'] as const;
export type Scope = (typeof SCOPES)[number];

export const MAX_PERMISSION = 2 ** 21 - 1; // 2097151
const SCOPE_SHIFT: Record<Scope, number> = { guest: 0, owner: 7, group: 14 };

export type Decoded = Record<Scope, Record<Operation, boolean>>;

export function bit(scope: Scope, op: Operation): number {
  return 2 ** (SCOPE_SHIFT[scope] + OPERATIONS.indexOf(op));
}

export function has(permission: number, scope: Scope, op: Operation): boolean {
  return (permission & bit(scope, op)) !== 0;
}

/** Build a permission from the operations granted to each scope. */
export function encode(grants: Partial<Record<Scope, readonly Operation[]>>): number {
  let value = 0;
  for (const scope of SCOPES) for (const op of grants[scope] ?? []) value |= bit(scope, op);
  return value;
}

export function decode(permission: number): Decoded {
  const out = {} as Decoded;
  for (const scope of SCOPES) {
    out[scope] = {} as Record<Operation, boolean>;
    for (const op of OPERATIONS) out[scope][op] = has(permission, scope, op);
  }
  return out;
}

/** "guest: peek,execute; owner: all; group: all" — for humans (CLI, logs). */
export function describe(permission: number): string {
  return SCOPES.map((scope) => {
    const ops = OPERATIONS.filter((op) => has(permission, scope, op));
    return `${scope}: ${ops.length === OPERATIONS.length ? 'all' : ops.length ? ops.join(',') : 'none'}`;
  }).join('; ');
}

/**
 * Accepts an integer 0…2097151 or a string of decimal digits meaning one; anything else
 * (negative, fractional, larger, non-numeric) is refused.
 */
export function parsePermission(value: unknown, field = 'permission'): number {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\d{1,7}$/.test(value)) n = Number(value);
  else throw new AppError('invalid_input', `${field} must be an integer from 0 to ${MAX_PERMISSION}`);
  if (!Number.isInteger(n) || n < 0 || n > MAX_PERMISSION) {
    throw new AppError('invalid_input', `${field} must be an integer from 0 to ${MAX_PERMISSION}`);
  }
  return n;
}

const ALL: readonly Operation[] = OPERATIONS;
/** The specification's two values for the signup action. */
export const SIGNUP_CLOSED = encode({ guest: ['peek'], owner: ALL, group: ALL }); // 2097025
export const SIGNUP_OPEN = SIGNUP_CLOSED | bit('guest', 'execute'); // 2097057
