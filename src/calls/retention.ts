import { parseTime } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Store } from '../store/index.ts';
import { oldestFirst } from '../store/oldest-first.ts';
import type { ArrivalOrder } from '../store/oldest-first.ts';

/** @see reference "Limits": call record retention 30 days */
export const RECORD_RETENTION_MS = 30 * 24 * 3600 * 1000;
const SWEEP_EVERY_MS = 3600 * 1000;

/**
 * Drops call records older than 30 days, hourly on the clock. Records arrive in time order, so a sweep stops at
 * the first young one and costs what it drops, however many records are kept.
 */
export function keepRecordsFor30Days(clock: Clock, store: Store): Pick<ArrivalOrder, 'newestFirst'> {
  const records = oldestFirst(store, 'calls');
  const sweep = (atMs: number): void => {
    const dropped = records.sweep((id) => {
      const at = parseTime(store.data.calls[id]?.at ?? '');
      return at <= atMs - RECORD_RETENTION_MS ? 'drop' : 'stop';
    });
    if (dropped > 0) void store.commit();
    clock.at(atMs + SWEEP_EVERY_MS, sweep);
  };
  clock.at(clock.now() + SWEEP_EVERY_MS, sweep);
  return { newestFirst: () => records.newestFirst() };
}
