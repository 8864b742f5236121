import type { Clock } from '../clock/index.ts';
import type { Store } from './store.ts';

const HOUR_MS = 3600 * 1000;
const BATCH = 500;

/**
 * A retention sweep, hourly on the clock: `drop(atMs, limit)` deletes at most `limit` records that are due
 * at the sweep's time and says how many it deleted. Each batch is a transaction of its own and the event loop
 * turns between batches, so a sweep of a million records never blocks requests for more than a batch. One sweep
 * runs at a time: sweeps that fall due while one runs (a jump of many hours) only move its time forward.
 */
export function sweepInBatches(clock: Clock, store: Store, drop: (atMs: number, limit: number) => number): void {
  let running = false;
  let sweptTo = -Infinity;
  let dueTo = -Infinity;
  const batches = async (): Promise<void> => {
    running = true;
    try {
      while (!store.closed && sweptTo < dueTo) {
        const atMs = dueTo;
        while (!store.closed && store.transaction(() => drop(atMs, BATCH)) === BATCH) await clock.wait(0);
        sweptTo = atMs;
      }
    } finally {
      running = false;
    }
  };
  const sweep = (atMs: number): void => {
    dueTo = Math.max(dueTo, atMs);
    if (!running) clock.track(batches());
    clock.at(atMs + HOUR_MS, sweep);
  };
  clock.at(clock.now() + HOUR_MS, sweep);
}
