import type { SqlValue } from './driver.ts';
import { storedJson } from './faults.ts';

/** The record a row's `body` column holds (JSON written by the same repository; anything else is damage). */
export const body = <T>(row: SqlValue[] | undefined, column = 0): T | undefined =>
  row === undefined ? undefined : storedJson<T>(row[column]);

export const bodies = <T>(rows: SqlValue[][], column = 0): T[] => rows.map((row) => storedJson<T>(row[column]));

/** `value` and everything in it made read-only: a record shared by every reader, that none may change. */
export const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
};

/** A page of `limit` rows, read as `limit + 1` so `hasMore` costs no count. */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; hasMore: boolean } {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/**
 * A WHERE clause of equalities, one per condition whose value is given: `[['account_id', id], ['status',
 * undefined]]` → `WHERE account_id = ?` with `[id]`. Columns are the caller's own words, never input.
 */
export function whereOf(conditions: [column: string, value: string | number | undefined][]): { sql: string; params: (string | number)[] } {
  const given = conditions.filter((c): c is [string, string | number] => c[1] !== undefined);
  return {
    sql: given.length > 0 ? `WHERE ${given.map(([column]) => `${column} = ?`).join(' AND ')}` : '',
    params: given.map(([, value]) => value),
  };
}
