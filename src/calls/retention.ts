import type { Clock } from '../clock/index.ts';
import type { Db } from '../db.ts';
import { sweepInBatches } from '../store/index.ts';

/** @see reference "Limits": call record retention 30 days */
export const RECORD_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Drops call records older than 30 days, hourly on the clock, oldest first by an index: a sweep costs what it drops. */
export function keepRecordsFor30Days(clock: Clock, db: Pick<Db, 'store' | 'calls'>): void {
  sweepInBatches(clock, db.store, (atMs, limit) => db.calls.dropBefore(atMs - RECORD_RETENTION_MS, limit));
}
