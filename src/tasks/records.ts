import type { Points } from '../points/index.ts';
import type { TaskPlan } from '../scenarios/index.ts';
import type { Store } from '../store/index.ts';
import { cachedRows, deepFreeze, pageOf, storedJson, whereOf } from '../store/index.ts';
import type { SqlValue } from '../store/index.ts';
import type { Task, TaskStatus } from './task.ts';

export interface StoredTask {
  task: Task;
  account_id: string;
  /** Creation order (newest-first listing sorts on it: created_at has whole seconds only); set when inserted. */
  seq: number;
  idempotency_key: string | null;
  /** Exact virtual times (the task object shows whole seconds). */
  created_ms: number;
  started_ms: number | null;
  plan: TaskPlan;
  /** The submission's callback address (not part of the task object). */
  webhook_url?: string | null;
  /** The key that submitted it (quota, concurrency), and what its quota gave at submission. */
  key?: string | null;
  quota_taken?: Points;
}

export interface IdempotencyRecord {
  task_id: string;
  model: string;
  /** Canonical JSON of the normalized input: equal requests normalize equal. */
  input: string;
}

export interface TaskFilter {
  accountId?: string;
  status?: TaskStatus;
  model?: string;
}

/** A task as a read answers it: the stored task, frozen, and its public object's JSON, made once per version. */
export interface TaskAnswer {
  stored: Readonly<StoredTask>;
  json: string;
}

export interface TasksRepo {
  get(id: string): StoredTask | undefined;
  /** The task as a read answers it, from memory while it is unchanged (the caller must not change it). */
  answer(id: string): TaskAnswer | undefined;
  has(id: string): boolean;
  /** Stores a new task; its `seq` is given here. */
  insert(stored: Omit<StoredTask, 'seq'>): StoredTask;
  /** Writes a task already stored. */
  put(stored: StoredTask): void;
  /** Newest first, one page. */
  page(filter: TaskFilter, limit: number, offset: number): { rows: StoredTask[]; hasMore: boolean };
  /** Unfinished tasks (queued or processing) in seq order, a page at a time: at most `limit`, after `afterSeq`. */
  unfinishedAfter(afterSeq: number, limit: number): StoredTask[];
  /** How many unfinished tasks each key and account holds (what concurrency counts), without reading the tasks. */
  unfinishedHolders(): { key: string | null; account_id: string; count: number }[];
  count(): number;
}

export interface IdempotencyRepo {
  get(accountId: string, key: string): IdempotencyRecord | undefined;
  put(accountId: string, key: string, record: IdempotencyRecord): void;
}

/** `seq` is the row's own number: kept out of the JSON, put back on read. */
const withSeq = (row: SqlValue[] | undefined): StoredTask | undefined =>
  row === undefined ? undefined : { ...storedJson<Omit<StoredTask, 'seq'>>(row[1]), seq: Number(row[0]) };
const jsonOf = ({ seq: _seq, ...rest }: StoredTask | Omit<StoredTask, 'seq'> & { seq?: number }): string => JSON.stringify(rest);

/**
 * The most tasks kept in memory; past it, the cache starts again empty (a stream of new tasks cannot grow it).
 * Polls read the tasks their clients are waiting on, a few hundred at a time at most: a larger cache would only
 * hold more of the tasks a submit load makes and nobody reads again.
 */
const MOST_CACHED = 1024;

export function tasksRepo(store: Store): TasksRepo {
  const { driver } = store;
  const rows = (found: SqlValue[][]): StoredTask[] => found.map((row) => withSeq(row) as StoredTask);
  // Every read of a task (a poll above all) finds its row here while the task is unchanged: this repo's own
  // writes keep it; any other write to the table empties it (cachedRows).
  const cached = cachedRows(driver, 'tasks', (id) => driver.prepare('SELECT seq, body FROM tasks WHERE id = ?').get(id), {
    derive: (row): TaskAnswer => {
      const stored = deepFreeze(withSeq(row) as StoredTask);
      return { stored, json: JSON.stringify(stored.task) };
    },
    most: MOST_CACHED,
  });
  return {
    get: (id) => withSeq(cached.read(id)),
    answer: (id) => cached.derived(id),
    has: (id) => driver.prepare('SELECT 1 FROM tasks WHERE id = ?').get(id) !== undefined,
    insert(stored) {
      const text = jsonOf(stored);
      let seq = 0;
      cached.wrote(stored.task.id, () => {
        seq = driver
          .prepare('INSERT INTO tasks (id, account_id, status, model, key, body) VALUES (?, ?, ?, ?, ?, ?)')
          .run(stored.task.id, stored.account_id, stored.task.status, stored.task.model, stored.key ?? null, text).lastInsertRowid;
        return [seq, text];
      });
      return { ...stored, seq };
    },
    put(stored) {
      const text = jsonOf(stored);
      cached.wrote(stored.task.id, () => {
        const { changes } = driver.prepare('UPDATE tasks SET status = ?, body = ? WHERE id = ?').run(stored.task.status, text, stored.task.id);
        if (changes !== 1) throw new Error(`task ${stored.task.id} is not stored`);
        return [stored.seq, text];
      });
    },
    page(filter, limit, offset) {
      const { sql, params } = whereOf([
        ['account_id', filter.accountId],
        ['status', filter.status],
        ['model', filter.model],
      ]);
      return pageOf(rows(driver.prepare(`SELECT seq, body FROM tasks ${sql} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(...params, limit + 1, offset)), limit);
    },
    count: () => Number(driver.prepare('SELECT count(*) FROM tasks').get()?.[0] ?? 0),
    unfinishedAfter: (afterSeq, limit) =>
      rows(driver.prepare("SELECT seq, body FROM tasks WHERE status IN ('queued', 'processing') AND seq > ? ORDER BY seq LIMIT ?").all(afterSeq, limit)),
    unfinishedHolders() {
      try {
        return driver
          .prepare("SELECT key, account_id, count(*) FROM tasks INDEXED BY tasks_unfinished_holders WHERE status IN ('queued', 'processing') GROUP BY account_id, key")
          .all()
          .map(([key, account, count]) => ({ key: typeof key === 'string' ? key : null, account_id: String(account), count: Number(count) }));
      } catch {
        // A text the store cannot read, or a store opened read-only before schema 5 (no column, no index): every
        // record read as the store reads one, which names a damaged row.
        const counts = new Map<string, { key: string | null; account_id: string; count: number }>();
        for (const { key, account_id } of rows(driver.prepare("SELECT seq, body FROM tasks WHERE status IN ('queued', 'processing')").all())) {
          const id = JSON.stringify([key ?? null, account_id]);
          const held = counts.get(id) ?? { key: key ?? null, account_id, count: 0 };
          held.count += 1;
          counts.set(id, held);
        }
        return [...counts.values()];
      }
    },
  };
}

export function idempotencyRepo(store: Store): IdempotencyRepo {
  const { driver } = store;
  return {
    get(accountId, key) {
      const row = driver.prepare('SELECT task_id, model, input FROM idempotency WHERE account_id = ? AND key = ?').get(accountId, key);
      return row === undefined ? undefined : { task_id: row[0] as string, model: row[1] as string, input: row[2] as string };
    },
    put: (accountId, key, record) =>
      void driver
        .prepare('INSERT OR REPLACE INTO idempotency (account_id, key, task_id, model, input) VALUES (?, ?, ?, ?, ?)')
        .run(accountId, key, record.task_id, record.model, record.input),
  };
}
