import type { Clock } from '../clock/index.ts';
import { sweepInBatches } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { NoncesRepo } from './records.ts';
import { SIGNATURE_TOLERANCE_SECONDS } from './signature.ts';

/**
 * Until when a nonce is kept: as long as its request's timestamp could still be accepted (wall-clock
 * milliseconds), so a replay inside the tolerance is refused.
 */
export const nonceExpiry = (timestampSeconds: number): number => (timestampSeconds + SIGNATURE_TOLERANCE_SECONDS) * 1000;

/**
 * Drops the nonces whose window has closed, hourly on the clock like the other sweeps. The windows are on the
 * wall clock (the timestamps are checked against it), so that is the time a sweep drops by: a nonce is gone at
 * the first sweep after its window closed.
 */
export function sweepExpiredNonces(clock: Clock, repos: { store: Store; nonces: NoncesRepo }): void {
  sweepInBatches(clock, repos.store, (_atMs, limit) => repos.nonces.dropExpired(clock.wallNow(), limit));
}
