import { parseTime } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Store } from '../store/index.ts';
import { sweepHourly } from '../store/index.ts';
import type { ArrivalOrder } from '../store/index.ts';

/** @see reference "Limits": call record retention 30 days */
export const RECORD_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * Drops call records older than 30 days, hourly on the clock. Records arrive in time order, so a sweep stops at
 * the first young one and costs what it drops, however many records are kept.
 */
export function keepRecordsFor30Days(clock: Clock, store: Store): Pick<ArrivalOrder, 'newestFirst'> {
  return sweepHourly(clock, store, 'calls', (id, atMs) =>
    parseTime(store.data.calls[id]?.at ?? '') <= atMs - RECORD_RETENTION_MS ? 'drop' : 'stop',
  );
}
