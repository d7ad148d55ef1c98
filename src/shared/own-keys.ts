/**
 * Records keyed by names that come from outside (end users, tool groups, template keys): read
 * and written by own keys only, so a name like "__proto__" or "constructor" is a key like any
 * other, never the object's prototype or one of Object's members.
 */

/** `record[key]` if the record has that key of its own. */
export function ownOf<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** `record[key] = value`, defined rather than assigned. */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
