import type { Clock } from '../clock/index.ts';
import { CHECKPOINT_EVERY_MS } from './open.ts';
import type { Store } from './store.ts';

const HOUR_MS = 3600 * 1000;
const BATCH = 500;
/** Log size past which a sweep lets the checkpointer catch up before its next batch (see open.ts). */
const WAL_PAUSE_BYTES = 64 * 1024 * 1024;
const WAL_PAUSE_MS = 2 * CHECKPOINT_EVERY_MS;

/**
 * A retention sweep, hourly on the clock: `drop(atMs, limit)` deletes at most `limit` records that are due
 * at the sweep's time and says how many it deleted. Each batch is a transaction of its own and the event loop
 * turns between batches, so a sweep of a million records never blocks requests for more than a batch. A sweep
 * is background work: when its deletions have grown the write-ahead log, it waits a moment of real time for the
 * checkpointer to copy the log, so the next write rewinds it instead of a COMMIT paying for a checkpoint. One
 * sweep runs at a time: sweeps that fall due while one runs (a jump of many hours) only move its time forward.
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
        while (!store.closed && store.transaction(() => drop(atMs, BATCH)) === BATCH) {
          await clock.wait(store.walBytes() > WAL_PAUSE_BYTES ? WAL_PAUSE_MS : 0);
        }
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
