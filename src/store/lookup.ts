import type { Driver, SqlValue } from './driver.ts';

/**
 * A stored entry by an id that came from outside (a path, a body): own entries only, so an id such as
 * `__proto__` or `constructor` finds nothing instead of Object.prototype.
 */
export function entry<T>(collection: Record<string, T>, id: string): T | undefined {
  return Object.hasOwn(collection, id) ? collection[id] : undefined;
}

/** The most rows a `cachedRows` keeps; past it, it starts again empty (an unbounded stream of unknown ids cannot grow it). */
const MOST_ROWS = 4096;

/**
 * `read(id)`'s row, remembered for as long as the driver's version of `table` stays the same: any write to the
 * table through the store (a PATCH, a reset, a state import, a rollback) forgets every row at once, so nothing
 * read here is ever older than the table. Rows are kept as read (the stored text), so every caller still parses
 * its own copy and may change it freely. The store has one writer, its own connection (the file is locked for
 * it); a read-only opening beside a running emulator reads once and closes.
 */
export function cachedRows(driver: Driver, table: string, read: (id: string) => SqlValue[] | undefined): (id: string) => SqlValue[] | undefined {
  const rows = new Map<string, SqlValue[] | null>();
  let version = driver.version(table);
  return (id) => {
    const now = driver.version(table);
    if (now !== version) {
      rows.clear();
      version = now;
    }
    let row = rows.get(id);
    if (row === undefined) {
      row = read(id) ?? null;
      if (rows.size >= MOST_ROWS) rows.clear();
      rows.set(id, row);
    }
    return row ?? undefined;
  };
}
