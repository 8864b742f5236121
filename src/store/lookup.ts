import type { Driver, SqlValue } from './driver.ts';
import { body, deepFreeze } from './rows.ts';

/**
 * A stored entry by an id that came from outside (a path, a body): own entries only, so an id such as
 * `__proto__` or `constructor` finds nothing instead of Object.prototype.
 */
export function entry<T>(collection: Record<string, T>, id: string): T | undefined {
  return Object.hasOwn(collection, id) ? collection[id] : undefined;
}

/** The most rows a `cachedRows` keeps unless told; past it, it starts again empty (an unbounded stream of unknown ids cannot grow it). */
const MOST_ROWS = 4096;

/** Rows of one table by id, from memory while the table is unchanged but for the writes made through `wrote`. */
export interface CachedRows<D> {
  read(id: string): SqlValue[] | undefined;
  /** What `derive` makes of the row, made once per version of the row: for readers that only look. */
  derived(id: string): D | undefined;
  /**
   * A write of one row through this cache: `write` runs it and answers the row as written, which is remembered.
   * Any write the cache was not told of since still empties it (the table's version moved twice).
   */
  wrote(id: string, write: () => SqlValue[]): void;
}

export interface CachedRowsOptions<D> {
  /** What readers that only look share of a row (a record parsed once and frozen, say). */
  derive: (row: SqlValue[]) => D;
  most?: number;
}

/**
 * `read(id)`'s row, remembered for as long as the driver's version of `table` moves only by the writes made
 * through `wrote`: any other write to the table through the store (a reset, a state import, a rollback, a
 * statement of its own) forgets every row at once, so nothing read here is ever older than the table. Rows are
 * kept as read (the stored text), so every caller of `read` still parses its own copy and may change it freely;
 * `derived` is shared, so what it makes must be frozen. The store has one writer, its own connection (the file is
 * locked for it); a read-only opening beside a running emulator reads once and closes.
 */
export function cachedRows<D>(driver: Driver, table: string, read: (id: string) => SqlValue[] | undefined, options: CachedRowsOptions<D>): CachedRows<D> {
  const most = options.most ?? MOST_ROWS;
  const rows = new Map<string, SqlValue[] | null>();
  // What was derived of each row: the row array itself is the key, so a row written or read again has none yet.
  const derived = new WeakMap<SqlValue[], D>();
  let version = driver.version(table);
  const fresh = (): void => {
    const now = driver.version(table);
    if (now !== version) {
      rows.clear();
      version = now;
    }
  };
  const remember = (id: string, row: SqlValue[] | null): void => {
    if (rows.size >= most) rows.clear();
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
    derived(id) {
      const row = readRow(id);
      if (row === undefined) return undefined;
      let made = derived.get(row);
      if (made === undefined) {
        made = options.derive(row);
        derived.set(row, made);
      }
      return made;
    },
    wrote(id, write) {
      fresh();
      // The write moved the version once: the row as written is the table's now. Had it failed, the version
      // moved all the same, and the next read empties the cache.
      remember(id, write());
      version = driver.version(table);
    },
  };
}

/** The `derive` of a table whose rows are one JSON body: the record, parsed once and frozen. */
export const frozenBody = <T>(row: SqlValue[]): Readonly<T> => deepFreeze(body<T>(row) as T);
