import { createHash } from 'node:crypto';

/** Which page of a control listing: 1-based; without a limit, every row. */
export interface PageQuery {
  page?: number;
  limit?: number | null;
  /** Versions of rows the client already holds: those rows are left out of `data` (see `listPage`). */
  known?: readonly string[];
}

/** A page of rows as a repository cuts it. */
export interface Rows<T> {
  rows: T[];
  hasMore: boolean;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  page: number;
  limit: number | null;
  has_more: boolean;
  versions: string[];
}

/**
 * The one pager of the control API's listings: cuts the page with `fetch(limit, offset)` and answers it with
 * the rows' versions. Without a limit the whole listing is one page (as accounts and callbacks always were).
 */
export function pageOf<Row, View extends object>(
  query: PageQuery,
  fetch: (limit: number, offset: number) => Rows<Row>,
  view: (row: Row) => View,
): ListPage<View> {
  const page = query.page ?? 1;
  const limit = query.limit ?? null;
  const { rows, hasMore } = limit === null ? fetch(Number.MAX_SAFE_INTEGER, 0) : fetch(limit, (page - 1) * limit);
  return listPage(rows.map(view), query.known ?? [], { page, limit, has_more: hasMore });
}

/** A page cut from rows that are all in memory (accounts are few: a handful per test run). */
export const sliceOf =
  <T>(all: readonly T[]) =>
  (limit: number, offset: number): Rows<T> => ({ rows: all.slice(offset, offset + limit), hasMore: all.length > offset + limit });

/** A row's version: a short hash of what the listing shows of it, for clients that keep the rows they read. */
export function versionOf(row: unknown): string {
  return createHash('sha256').update(JSON.stringify(row)).digest('base64url').slice(0, 12);
}

/**
 * A list answer with `versions`, the version of every row of the page in order; rows whose version the client
 * already holds are left out of `data`, which keeps the others in the page's order. The client rebuilds the page
 * from its own copies and the few rows sent: a quiet emulator answers a dashboard's poll with a few bytes per list.
 */
function listPage<T extends object>(
  rows: T[],
  known: readonly string[],
  paging: { page: number; limit: number | null; has_more: boolean },
): ListPage<T> {
  const held = new Set(known);
  const versions = rows.map(versionOf);
  return { object: 'list', data: rows.filter((_row, i) => !held.has(versions[i] as string)), ...paging, versions };
}

/** `known` as the query carries it: versions separated by commas. */
export const knownOf = (value: unknown): string[] => (value === undefined ? [] : String(value).split(','));
