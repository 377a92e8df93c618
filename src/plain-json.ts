/**
 * JSON from outside (request bodies, files an operator writes) as plain data: no key may reach an
 * object's prototype chain. `JSON.parse` keeps `"__proto__"` as an own key, but code that copies,
 * merges or follows paths through such an object (a SCIM PATCH, dotted keys) would write into
 * `Object.prototype` and change every object of the process. Refused wherever they appear.
 */
import { AppError } from './errors';

/** Keys that name the prototype chain rather than data. */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Whether a key or path segment names the prototype chain. In any case: JavaScript's keys are
 * case-sensitive, but SCIM resolves attribute names without case, and no attribute is named so.
 */
export const isPrototypeKey = (key: string): boolean => PROTOTYPE_KEYS.has(key.toLowerCase());

/** Nested deeper than this, a document is refused (a request body is 64 KiB at most). */
const MAX_DEPTH = 64;

/**
 * Refuses a document with a prototype key at any depth (or as a part of a dotted key), or nested deeper than 64 levels (400
 * invalid_input, SCIM's invalidValue). `what` names the document in the message.
 */
export function assertPlainJson(value: unknown, what = 'the body'): void {
  const walk = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== 'object') return;
    if (depth > MAX_DEPTH) throw new AppError('invalid_input', `${what} is nested too deeply`, { scimType: 'invalidValue' });
    if (Array.isArray(v)) {
      for (const item of v) walk(item, depth + 1);
      return;
    }
    for (const key of Object.keys(v)) {
      // A dotted key too: some readers take "name.givenName" as a path (SCIM's path-less PATCH values).
      if (key.split('.').some(isPrototypeKey)) throw new AppError('invalid_input', `${what} may not use the key ${key}`, { scimType: 'invalidValue' });
      walk((v as Record<string, unknown>)[key], depth + 1);
    }
  };
  walk(value, 0);
}
