import type { SqlValue, Store } from '../store/index.ts';
import { bodies, body, pageOf, whereOf } from '../store/index.ts';
import type { CallRecord } from './call-record.ts';

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
  /**
   * `put` soon, with the other records put soon within a few milliseconds: one `store.later` job, one
   * statement per up to 16 records (a commit per record would cost a read more than the read, and a statement per
   * record more than the record). A record whose store a reset has wiped since is dropped.
   */
  putSoon(record: CallRecord, atMs: number): void;
  /** Newest first. */
  page(filter: CallFilter, limit: number, offset: number): { rows: CallRecord[]; hasMore: boolean };
  /** Deletes at most `limit` records made at or before `atMs`, oldest first; returns how many. */
  dropBefore(atMs: number, limit: number): number;
}

export function callsRepo(store: Store): CallsRepo {
  const { driver } = store;
  const put = (record: CallRecord, atMs: number): void => void driver.prepare(upsert(1)).run(...row(record, atMs));
  const putMany = (records: [record: CallRecord, atMs: number][]): void => {
    for (let from = 0; from < records.length; from += MOST_PER_STATEMENT) {
      const some = records.slice(from, from + MOST_PER_STATEMENT);
      driver.prepare(upsert(some.length)).run(...some.flatMap(([record, atMs]) => row(record, atMs)));
    }
  };
  // Records put soon, each with the store's epoch then; written by the one `later` job queued with the first.
  const soon: [record: CallRecord, atMs: number, epoch: number][] = [];
  const writeSoon = (): void => {
    const kept = soon.splice(0).filter(([, , epoch]) => epoch === store.epoch);
    try {
      putMany(kept.map(([record, atMs]) => [record, atMs]));
    } catch (err) {
      // One record that cannot be written must not take the others with it: each on its own, as they came.
      for (const [record, atMs] of kept) {
        try {
          put(record, atMs);
        } catch {
          // Reported once below, as the batch's failure.
        }
      }
      throw err;
    }
  };
  return {
    get(requestId) {
      store.flushLater();
      return body<CallRecord>(driver.prepare('SELECT body FROM calls WHERE request_id = ?').get(requestId));
    },
    put,
    putSoon(record, atMs) {
      if (soon.length === 0) store.later(writeSoon);
      soon.push([record, atMs, store.epoch]);
      if (soon.length === MOST_SOON) store.hurry();
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
/** Records put soon past which they are written on the next turn rather than at the end of the store's wait. */
const MOST_SOON = 256;

/** The statement writing `rows` records (1 to MOST_PER_STATEMENT), its text made once. */
const UPSERTS = Array.from(
  { length: MOST_PER_STATEMENT + 1 },
  (_, rows) => `INSERT INTO calls (request_id, at_ms, account_id, key, body) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ')}
   ON CONFLICT (request_id) DO UPDATE SET body = excluded.body`,
);
const upsert = (rows: number): string => UPSERTS[rows] as string;

const row = (record: CallRecord, atMs: number): SqlValue[] => [record.request_id, atMs, record.account_id, record.key, JSON.stringify(record)];
