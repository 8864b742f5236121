import Database from 'libsql';
import type { Driver, SqlValue, Statement } from './driver.ts';
import { StoreBusyError } from './driver.ts';

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
      const statement: Statement = {
        run: (...params) => {
          const result = wrap(() => raw.run(...params));
          return { changes: result.changes, lastInsertRowid: Number(result.lastInsertRowid) };
        },
        get: (...params) => wrap(() => raw.get(...params) as SqlValue[] | undefined),
        all: (...params) => wrap(() => raw.all(...params) as SqlValue[][]),
      };
      cache.set(sql, statement);
      return statement;
    },
    exec: (sql) => void wrap(() => db.exec(sql)),
    close: () => {
      cache.clear();
      db.close();
    },
  };
}
