import Database from 'libsql';
import type { Driver, SqlValue, Statement } from './driver.ts';
import { controlsTransactionOnly, StoreBusyError, tablesWritten } from './driver.ts';

type Raw = {
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): unknown[];
  raw(on?: boolean): Raw;
  reader: boolean;
};

const busy = (err: unknown): boolean => (err as { code?: string } | null)?.code === 'SQLITE_BUSY';

/**
 * `libsql` (better-sqlite3's API, prebuilt binaries as npm optional dependencies: no compile step on install).
 * Statements run in raw mode: arrays of values, without the per-row `_metadata` object libsql adds otherwise.
 */
export function openLibsql(path: string): Driver {
  let db: InstanceType<typeof Database>;
  try {
    // No busy wait: a store held by another process is refused at once.
    db = new Database(path, { timeout: 0 });
  } catch (err) {
    if (busy(err)) throw new StoreBusyError((err as Error).message);
    throw err;
  }
  const cache = new Map<string, Statement>();
  // Writes per table, and writes that may have touched any: a table's version is the sum, so it moves with either.
  const writes = new Map<string, number>();
  let anyWrites = 0;
  const wrote = (tables: string[] | 'all'): void => {
    if (tables === 'all') anyWrites += 1;
    else for (const table of tables) writes.set(table, (writes.get(table) ?? 0) + 1);
  };
  const wrap = <T>(work: () => T): T => {
    try {
      return work();
    } catch (err) {
      if (busy(err)) throw new StoreBusyError((err as Error).message);
      throw err;
    }
  };
  return {
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached) return cached;
      const raw = wrap(() => db.prepare(sql) as unknown as Raw);
      if (raw.reader) raw.raw(true);
      const tables = tablesWritten(sql);
      // A statement that may write counts as a write once it ran, even when it failed: what a failed statement
      // left is not worth reasoning about.
      const runs =
        tables !== 'all' && tables.length === 0
          ? wrap
          : <T>(work: () => T): T => {
              try {
                return wrap(work);
              } finally {
                wrote(tables);
              }
            };
      const statement: Statement = {
        run: (...params) => {
          const result = runs(() => raw.run(...params));
          return { changes: result.changes, lastInsertRowid: Number(result.lastInsertRowid) };
        },
        get: (...params) => runs(() => raw.get(...params) as SqlValue[] | undefined),
        all: (...params) => runs(() => raw.all(...params) as SqlValue[][]),
      };
      cache.set(sql, statement);
      return statement;
    },
    exec(sql) {
      // A rollback undoes writes whose rows may have been read since: every table counts as changed. So does a
      // COMMIT that fails (SQLite may have rolled the transaction back itself).
      try {
        wrap(() => db.exec(sql));
      } catch (err) {
        wrote('all');
        throw err;
      }
      if (!controlsTransactionOnly(sql)) wrote('all');
    },
    version: (table) => anyWrites + (writes.get(table) ?? 0),
    close: () => {
      cache.clear();
      db.close();
    },
  };
}
