/**
 * `value` with every object and array in it frozen, for values many readers
 * share instead of each getting a copy: a reader that tried to change one
 * would change it for all, so the attempt throws instead.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
