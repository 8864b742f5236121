import type { Driver, SqlValue } from './driver.ts';
import { body, deepFreeze } from './rows.ts';

/**
 * A stored entry by an id that came from outside (a path, a body): own entries only, so an id such as
 * `__proto__` or `constructor` finds nothing instead of Object.prototype.
 */
export function entry<T>(collection: Record<string, T>, id: string): T | undefined {
  return Object.hasOwn(collection, id) ? collection[id] : undefined;
}

/** The most rows a `cachedRows` keeps; past it, it starts again empty (an unbounded stream of unknown ids cannot grow it). */
const MOST_ROWS = 4096;

/** Rows of one table by id, from memory while the table is unchanged but for the writes told with `wrote`. */
export interface CachedRows {
  read(id: string): SqlValue[] | undefined;
  /** The row's record, parsed once and frozen, for readers that only look (authentication on every request). */
  frozen<T>(id: string): Readonly<T> | undefined;
  /**
   * A write of one row through this cache: `write` runs it, and the row it wrote is remembered. Any write the
   * cache was not told of since still empties it (the table's version moved twice).
   */
  wrote(id: string, row: SqlValue[], write: () => void): void;
}

/**
 * `read(id)`'s row, remembered for as long as the driver's version of `table` moves only by the writes made
 * through `wrote`: any other write to the table through the store (a reset, a state import, a rollback, a
 * statement of its own) forgets every row at once, so nothing read here is ever older than the table. Rows are
 * kept as read (the stored text), so every caller still parses its own copy and may change it freely. The store
 * has one writer, its own connection (the file is locked for it); a read-only opening beside a running emulator
 * reads once and closes.
 */
export function cachedRows(driver: Driver, table: string, read: (id: string) => SqlValue[] | undefined): CachedRows {
  const rows = new Map<string, SqlValue[] | null>();
  // Parsed records by row: the row array itself is the key, so a row written or read again has none yet.
  const records = new WeakMap<SqlValue[], unknown>();
  let version = driver.version(table);
  const fresh = (): void => {
    const now = driver.version(table);
    if (now !== version) {
      rows.clear();
      version = now;
    }
  };
  const remember = (id: string, row: SqlValue[] | null): void => {
    if (rows.size >= MOST_ROWS) rows.clear();
    rows.set(id, row);
  };
  const readRow = (id: string): SqlValue[] | undefined => {
    fresh();
    let row = rows.get(id);
    if (row === undefined) {
      row = read(id) ?? null;
      remember(id, row);
    }
    return row ?? undefined;
  };
  return {
    read: readRow,
    frozen<T>(id: string): Readonly<T> | undefined {
      const row = readRow(id);
      if (row === undefined) return undefined;
      if (!records.has(row)) records.set(row, deepFreeze(body<T>(row)));
      return records.get(row) as Readonly<T>;
    },
    wrote(id, row, write) {
      fresh();
      write();
      // The write moved the version once: the row as written is the table's now. Had it failed, the version
      // moved all the same, and the next read empties the cache.
      remember(id, row);
      version = driver.version(table);
    },
  };
}
