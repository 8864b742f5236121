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
  close(): void;
}

/** The database answered SQLITE_BUSY: another connection holds the lock. */
export class StoreBusyError extends Error {}
