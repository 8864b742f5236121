import { parseTime } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Store } from '../store/index.ts';

/** @see reference "Limits": call record retention 30 days */
export const RECORD_RETENTION_MS = 30 * 24 * 3600 * 1000;
const SWEEP_EVERY_MS = 3600 * 1000;

/**
 * Drops call records older than 30 days, hourly on the clock. Records are kept in arrival order, so a sweep
 * stops at the first young one.
 */
export function keepRecordsFor30Days(clock: Clock, store: Store): void {
  const sweep = (atMs: number): void => {
    const calls = store.data.calls;
    let dropped = 0;
    for (const id in calls) {
      const at = parseTime(calls[id]?.at ?? '');
      if (!(at <= atMs - RECORD_RETENTION_MS)) break;
      delete calls[id];
      dropped += 1;
    }
    if (dropped > 0) void store.commit();
    clock.at(atMs + SWEEP_EVERY_MS, sweep);
  };
  clock.at(clock.now() + SWEEP_EVERY_MS, sweep);
}
