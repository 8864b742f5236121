import { formatTime } from '../clock/index.ts';
import type { LedgerRepo } from '../billing/index.ts';
import type { ScenariosRepo } from '../scenarios/index.ts';
import { bodies } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { IdempotencyRecord, TasksRepo } from '../tasks/index.ts';
import { STATE_FORMAT, STATE_VERSION } from './document.ts';
import type { StateDocument } from './document.ts';

/** Reads every record of the store into a state document (oldest first in each section). */
export function exportState(db: { store: Store; tasks: TasksRepo; ledger: LedgerRepo; scenarios: ScenariosRepo }, nowMs: number | null): StateDocument {
  const { driver } = db.store;
  db.store.flushLater();
  const all = <T>(sql: string): T[] => bodies<T>(driver.prepare(sql).all());
  const idempotency = driver
    .prepare('SELECT account_id, key, task_id, model, input FROM idempotency ORDER BY account_id, key')
    .all()
    .map(([account_id, key, task_id, model, input]) => ({ account_id, key, task_id, model, input }) as IdempotencyRecord & { account_id: string; key: string });
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    exported_at: nowMs === null ? null : formatTime(nowMs),
    clock_ms: db.store.meta.get<number>('clock_ms') ?? null,
    accounts: all('SELECT body FROM accounts ORDER BY seq'),
    keys: all('SELECT body FROM keys ORDER BY seq'),
    tasks: db.tasks.page({}, Number.MAX_SAFE_INTEGER, 0).rows.reverse(),
    idempotency,
    ledger: db.ledger.after(0, Number.MAX_SAFE_INTEGER),
    files: all('SELECT body FROM files ORDER BY seq'),
    deliveries: all('SELECT body FROM deliveries ORDER BY seq'),
    calls: all('SELECT body FROM calls ORDER BY seq'),
    // As they are listed: the newest load first.
    scenarios: db.scenarios.all(),
  };
}
