import type { Clock } from '../clock/index.ts';
import { sweepInBatches } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { CallsRepo } from './records.ts';

/** @see reference "Limits": call record retention 30 days */
export const RECORD_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Drops call records older than 30 days, hourly on the clock, oldest first by an index: a sweep costs what it drops. */
export function keepRecordsFor30Days(clock: Clock, repos: { store: Store; calls: CallsRepo }): void {
  sweepInBatches(clock, repos.store, (atMs, limit) => repos.calls.dropBefore(atMs - RECORD_RETENTION_MS, limit));
}
