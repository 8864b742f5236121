/**
 * A stored entry by an id that came from outside (a path, a body): own entries only, so an id such as
 * `__proto__` or `constructor` finds nothing instead of Object.prototype.
 */
export function entry<T>(collection: Record<string, T>, id: string): T | undefined {
  return Object.hasOwn(collection, id) ? collection[id] : undefined;
}
