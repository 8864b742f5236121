import { parseTime } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Store } from '../store/index.ts';
import { sweepHourly } from '../store/index.ts';

/** Emulator-defined: the reference does not say how long callback messages stay listed and resendable. */
export const DEFAULT_DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * Drops callback messages that are done (delivered, or failed after the last retry) once they are older than
 * the retention, hourly on the clock, so a long-running instance does not keep every message body it ever sent.
 * A message still retrying is kept however old it is.
 */
export function keepDeliveriesFor(clock: Clock, store: Store, retentionMs: number = DEFAULT_DELIVERY_RETENTION_MS): void {
  sweepHourly(clock, store, 'deliveries', (id, atMs) => {
    const delivery = store.data.deliveries[id];
    if (!delivery || !(parseTime(delivery.created_at) <= atMs - retentionMs)) return 'stop';
    return delivery.status === 'pending' ? 'keep' : 'drop';
  });
}
