import type { Points } from '../billing/index.ts';
import type { QuotaPeriod } from './periods.ts';

/**
 * A key's settings, set when it is created or later through the control API.
 * @see reference "Authentication" 3 and "Limits"
 */
export interface KeySettings {
  /** Callable models; null: all. */
  models: string[] | null;
  quota: { points: Points; period: QuotaPeriod } | null;
  /** Requests per minute; null: no limit. */
  rpm: number | null;
  /** Running tasks plus text calls in flight; null: no limit. */
  concurrency: number | null;
  /** The secret of signed requests; null: signing off. */
  signing_secret: string | null;
}

export const NO_SETTINGS: KeySettings = { models: null, quota: null, rpm: null, concurrency: null, signing_secret: null };

/** What the key's quota has used in its current period: freezes count, refunds give back. */
export interface QuotaUse {
  period_start_ms: number;
  used: Points;
}
