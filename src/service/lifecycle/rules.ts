import type { Clock } from '../../clock/index.ts';
import type { Db } from '../../db.ts';
import { finished } from '../../keys/index.ts';
import type { Concurrency } from '../../keys/index.ts';
import type { Store } from '../../store/index.ts';
import type { TerminalListener } from '../../tasks/index.ts';

/**
 * The clock's position goes with every write (before each commit), so a restart never resumes before a time
 * already stored. `storedMs`: the position the store held when it opened.
 */
export function stampClockOnCommit(store: Store, clock: Clock, storedMs: number | undefined): void {
  let stamped = storedMs ?? 0;
  store.beforeCommit(() => {
    const now = clock.now();
    if (now <= stamped) return;
    store.meta.set('clock_ms', now);
    stamped = now;
  });
}

/** When a task ends: it stops counting toward concurrency, and the key's quota keeps only what was charged. */
export const releaseWhenTaskEnds =
  (db: Db, concurrency: Concurrency): TerminalListener =>
  (stored, atMs) => {
    const key = stored.key ? (db.keys.get(stored.key) ?? null) : null;
    const taken = { points: stored.quota_taken ?? stored.task.points.frozen, atMs: stored.created_ms };
    finished(db, concurrency, key, stored.account_id, taken, stored.task.points.charged, atMs);
  };
