import type { Store } from '../store/index.ts';
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
    put: (record, atMs) =>
      void driver
        .prepare(
          `INSERT INTO calls (request_id, at_ms, account_id, key, body) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (request_id) DO UPDATE SET body = excluded.body`,
        )
        .run(record.request_id, atMs, record.account_id, record.key, JSON.stringify(record)),
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
