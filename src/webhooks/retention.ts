import type { Clock } from '../clock/index.ts';
import type { Store } from '../store/index.ts';
import type { DeliveriesRepo } from './records.ts';
import { sweepInBatches } from '../store/index.ts';
import { START_DEFAULTS } from '../defaults/index.ts';

/** Emulator-defined: the reference does not say how long deliveries stay listed and resendable. */
export const DEFAULT_DELIVERY_RETENTION_MS = START_DEFAULTS.deliveryRetentionHours * 3600 * 1000;

/**
 * Drops deliveries that are done (delivered, or failed after the last retry) once they are older than
 * the retention, hourly on the clock, so a long-running instance does not keep every callback body it ever sent.
 * A delivery still retrying is kept however old it is.
 */
export function keepDeliveriesFor(clock: Clock, db: { store: Store; deliveries: DeliveriesRepo }, retentionMs: number = DEFAULT_DELIVERY_RETENTION_MS): void {
  sweepInBatches(clock, db.store, (atMs, limit) => db.deliveries.dropFinished(atMs - retentionMs, limit));
}
