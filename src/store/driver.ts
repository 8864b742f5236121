/**
 * The few calls the store makes of an embedded SQL database. Rows come back as arrays of column values, in the
 * order the query names them. Moving to Node's built-in `node:sqlite`, or another embedded binding, is one new
 * adapter of this interface.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;

export interface Statement {
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number };
  get(...params: SqlValue[]): SqlValue[] | undefined;
  all(...params: SqlValue[]): SqlValue[][];
}

export interface Driver {
  /** Prepared once per SQL text and reused. */
  prepare(sql: string): Statement;
  exec(sql: string): void;
  /**
   * A query's rows one at a time, exactly as SQLite has them: nothing decoded, nothing checked, nothing cached
   * (the store check, which selects texts as bytes so that a damaged one reaches it as bytes).
   */
  scan(sql: string): Iterable<SqlValue[]>;
  close(): void;
  /**
   * A number that changes whenever `table` may have changed through this connection: a statement writing it
   * ran, or anything the driver cannot read as leaving it alone (a rollback, a migration, a statement naming no
   * table). Equal numbers mean rows read from `table` are still what it holds, for the store's one writer.
   */
  version(table: string): number;
}

/** The database answered SQLITE_BUSY: another connection holds the lock. */
export class StoreBusyError extends Error {}

/**
 * The tables a statement may write, from its text: `'all'` for anything that is neither a plain read nor
 * a write that names its table (a rollback, a pragma, a migration), none for a read.
 */
export function tablesWritten(sql: string): string[] | 'all' {
  const tables = [...sql.matchAll(WRITES)].map((match) => (match[1] as string).toLowerCase());
  if (tables.length > 0) return CREATES.test(sql) || TRIGGERS.test(sql) ? 'all' : tables;
  return READ.test(sql) ? [] : 'all';
}

// A schema-qualified name (`main.keys`) counts by its table.
const WRITES = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+(?:["`[]?\w+["`\]]?\s*\.\s*)?["`[]?(\w+)/gi;
const READ = /^\s*(?:SELECT|WITH)\b/i;
const CREATES = /\b(?:CREATE|DROP|ALTER)\b/i;
const TRIGGERS = /\bTRIGGER\b/i;

/** Transaction control alone changes no table; its ROLLBACK forms are not in the list (they undo writes). */
export const controlsTransactionOnly = (sql: string): boolean =>
  sql
    .split(';')
    .map((part) => part.trim())
    .every((part) => part === '' || /^(?:BEGIN(?:\s+(?:DEFERRED|IMMEDIATE|EXCLUSIVE))?|COMMIT|END|SAVEPOINT\s+\w+|RELEASE(?:\s+SAVEPOINT)?\s+\w+)$/i.test(part));
