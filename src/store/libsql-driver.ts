import { resolve } from 'node:path';
import Database from 'libsql';
import type { Driver, SqlValue, Statement } from './driver.ts';
import { controlsTransactionOnly, StoreBusyError, tablesWritten } from './driver.ts';
import { storedText, storeFault } from './faults.ts';

type Raw = {
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): unknown[];
  raw(on?: boolean): Raw;
  columns(): { name: string; column: string | null; table: string | null; type: string | null }[];
  iterate(...params: SqlValue[]): Iterable<SqlValue[]>;
  reader: boolean;
};

const busy = (err: unknown): boolean => (err as { code?: string } | null)?.code === 'SQLITE_BUSY';

/**
 * A query whose text columns come back as bytes. libsql turns a stored text into a JavaScript string in native
 * code that aborts the whole process on invalid UTF-8 (a Rust panic: SIGABRT, nothing to catch), so one damaged
 * byte in a file would crash the emulator on the first read of its row. Read as a BLOB, the same text reaches
 * JavaScript as bytes, and `storedText` decodes it strictly: damage is an error naming the column, the server
 * stays up. Only plain queries are rewritten (a pragma's answer is SQLite's own text).
 */
function textAsBytes(sql: string, columns: number): string | null {
  if (!/^\s*(?:SELECT|WITH)\b/i.test(sql) || columns === 0) return null;
  const names = Array.from({ length: columns }, (_, i) => `c${i}`);
  const cells = names.map((c) => `CASE WHEN typeof(${c}) = 'text' THEN CAST(${c} AS BLOB) ELSE ${c} END`);
  return `WITH q(${names.join(', ')}) AS (${sql.trim().replace(/;$/, '')}) SELECT ${cells.join(', ')} FROM q`;
}

/**
 * A file path as an SQLite URI asking for a read-only connection. libsql ignores better-sqlite3's `readonly`
 * option; SQLite's own `mode=ro` holds. The path is made absolute (`file:///…`: a path that begins `//` would read
 * as a host), and `?`, `#` and `%`, which would end or change it, are escaped.
 */
export function readOnlyUri(path: string): string {
  const absolute = process.platform === 'win32' ? resolve(path).replace(/\\/g, '/') : resolve(path);
  return `file://${absolute.startsWith('/') ? '' : '/'}${absolute.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}?mode=ro`;
}

/**
 * `libsql` (better-sqlite3's API, prebuilt binaries as npm optional dependencies: no compile step on install).
 * Statements run in raw mode: arrays of values, without the per-row `_metadata` object libsql adds otherwise.
 * `readOnly`: a connection that writes nothing, and so, unlike a read-write one that is the last to close, never
 * checkpoints the write-ahead log into the file nor removes it (a store whose log is damaged stays as it was).
 */
export function openLibsql(path: string, options: { readOnly?: boolean } = {}): Driver {
  let db: InstanceType<typeof Database>;
  try {
    // No busy wait: a store held by another process is refused at once.
    db = new Database(options.readOnly ? readOnlyUri(path) : path, { timeout: 0 });
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
      throw storeFault(err, path === ':memory:' ? 'the store in memory' : path);
    }
  };
  return {
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached) return cached;
      const plain = wrap(() => db.prepare(sql) as unknown as Raw);
      const columns = plain.reader ? plain.columns() : [];
      const bytesSql = textAsBytes(sql, columns.length);
      const raw = bytesSql === null ? plain : wrap(() => db.prepare(bytesSql) as unknown as Raw);
      if (raw.reader) raw.raw(true);
      const where = (i: number): string => {
        const column = columns[i];
        return column?.table && column.column ? `${column.table}.${column.column}` : `column ${column?.name ?? i} of a query`;
      };
      // Every text of the answer arrives as bytes (no table here has a BLOB column): each is decoded strictly.
      const decoded =
        bytesSql === null
          ? (row: SqlValue[]): SqlValue[] => row
          : (row: SqlValue[]): SqlValue[] => row.map((cell, i) => (cell instanceof Uint8Array ? storedText(cell, () => where(i)) : cell));
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
        get: (...params) => {
          const row = runs(() => raw.get(...params) as SqlValue[] | undefined);
          return row === undefined ? undefined : decoded(row);
        },
        all: (...params) => runs(() => raw.all(...params) as SqlValue[][]).map(decoded),
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
    scan: (sql) => wrap(() => (db.prepare(sql) as unknown as Raw).raw(true).iterate()),
    version: (table) => anyWrites + (writes.get(table) ?? 0),
    close: () => {
      cache.clear();
      db.close();
    },
  };
}
