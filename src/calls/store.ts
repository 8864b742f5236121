import type { SqlValue, Store } from '../store/index.ts';
import { bodies, body, pageOf, whereOf } from '../store/index.ts';
import type { CallRecord } from './records.ts';

export interface CallFilter {
  account?: string;
  key?: string;
  path?: string;
  status?: number;
  model?: string;
  error_code?: string;
}

export interface CallsRepo {
  get(requestId: string): CallRecord | undefined;
  /** Writes the record of a request (again, when its answer ends: status and latency are final then). */
  put(record: CallRecord, atMs: number): void;
  /** `put` of several records; one statement per up to 16 (a statement costs more than a row on this store). */
  putMany(records: [record: CallRecord, atMs: number][]): void;
  /** Newest first. */
  page(filter: CallFilter, limit: number, offset: number): { rows: CallRecord[]; hasMore: boolean };
  /** Deletes at most `limit` records made at or before `atMs`, oldest first; returns how many. */
  dropBefore(atMs: number, limit: number): number;
}

export function callsRepo(store: Store): CallsRepo {
  const { driver } = store;
  return {
    get(requestId) {
      store.flushLater();
      return body<CallRecord>(driver.prepare('SELECT body FROM calls WHERE request_id = ?').get(requestId));
    },
    put: (record, atMs) => void driver.prepare(upsert(1)).run(...row(record, atMs)),
    putMany(records) {
      for (let from = 0; from < records.length; from += MOST_PER_STATEMENT) {
        const some = records.slice(from, from + MOST_PER_STATEMENT);
        driver.prepare(upsert(some.length)).run(...some.flatMap(([record, atMs]) => row(record, atMs)));
      }
    },
    page(filter, limit, offset) {
      store.flushLater();
      // Account and key are columns with an index; the rest filter the record's JSON on the way down the newest.
      const { sql, params } = whereOf([
        ['account_id', filter.account],
        ['key', filter.key],
        ["body ->> '$.path'", filter.path],
        ["body ->> '$.status'", filter.status],
        ["body ->> '$.model'", filter.model],
        ["body ->> '$.error_code'", filter.error_code],
      ]);
      const rows = driver.prepare(`SELECT body FROM calls ${sql} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(...params, limit + 1, offset);
      return pageOf(bodies<CallRecord>(rows), limit);
    },
    dropBefore: (atMs, limit) =>
      driver.prepare('DELETE FROM calls WHERE seq IN (SELECT seq FROM calls WHERE at_ms <= ? ORDER BY at_ms LIMIT ?)').run(atMs, limit).changes,
  };
}

const MOST_PER_STATEMENT = 16;

/** The statement writing `rows` records (1 to MOST_PER_STATEMENT), its text made once. */
const UPSERTS = Array.from(
  { length: MOST_PER_STATEMENT + 1 },
  (_, rows) => `INSERT INTO calls (request_id, at_ms, account_id, key, body) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ')}
   ON CONFLICT (request_id) DO UPDATE SET body = excluded.body`,
);
const upsert = (rows: number): string => UPSERTS[rows] as string;

const row = (record: CallRecord, atMs: number): SqlValue[] => [record.request_id, atMs, record.account_id, record.key, JSON.stringify(record)];
