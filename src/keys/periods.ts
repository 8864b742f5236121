/** Quota periods reset at Beijing-time boundaries: midnight, Monday midnight, the 1st at midnight. */
import type { QuotaPeriod } from '../accounts/index.ts';

export type { QuotaPeriod } from '../accounts/index.ts';

const OFFSET_MS = 8 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

/** The start (epoch ms) of the period that contains `ms`. */
export function periodStart(period: QuotaPeriod, ms: number): number {
  const local = new Date(ms + OFFSET_MS);
  const midnight = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - OFFSET_MS;
  switch (period) {
    case 'daily':
      return midnight;
    case 'weekly':
      // getUTCDay: 0 is Sunday; the week starts on Monday.
      return midnight - ((local.getUTCDay() + 6) % 7) * DAY_MS;
    case 'monthly':
      return Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), 1) - OFFSET_MS;
  }
}

/** The start of the next period after the one containing `ms`. */
export function nextPeriodStart(period: QuotaPeriod, ms: number): number {
  const start = periodStart(period, ms);
  if (period === 'daily') return start + DAY_MS;
  if (period === 'weekly') return start + 7 * DAY_MS;
  const local = new Date(start + OFFSET_MS);
  return Date.UTC(local.getUTCFullYear(), local.getUTCMonth() + 1, 1) - OFFSET_MS;
}
