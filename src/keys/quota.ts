import { add, cmp, isNegative, sub, ZERO } from '../points/index.ts';
import type { Points } from '../points/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import type { StoredKey } from '../accounts/index.ts';
import { nextPeriodStart, periodStart } from './periods.ts';

/** The key's use in the period containing `nowMs` (a new period starts from nothing). */
function current(key: StoredKey, nowMs: number): Points {
  const quota = key.settings?.quota;
  if (!quota || !key.quota_use) return ZERO;
  return key.quota_use.period_start_ms === periodStart(quota.period, nowMs) ? key.quota_use.used : ZERO;
}

/**
 * Takes `points` from the key's quota, or 402 key_quota_exceeded naming when it resets.
 * @see reference "Authentication" 3: a quota that can reset daily, weekly or monthly
 */
export function takeQuota(key: StoredKey, points: Points, nowMs: number, force = false): void {
  const quota = key.settings?.quota;
  if (!quota) return;
  const used = add(current(key, nowMs), points);
  if (!force && cmp(used, quota.points) > 0) {
    throw new ApiError(
      'key_quota_exceeded',
      `This call needs ${points} points; the key's ${quota.period} quota of ${quota.points} has ${sub(quota.points, current(key, nowMs))} left. It resets at ${formatTime(nextPeriodStart(quota.period, nowMs))}.`,
    );
  }
  key.quota_use = { period_start_ms: periodStart(quota.period, nowMs), used };
}

/** A refund gives its points back to the current period (never below nothing). */
export function giveBackQuota(key: StoredKey, points: Points, nowMs: number): void {
  const quota = key.settings?.quota;
  if (!quota) return;
  const left = sub(current(key, nowMs), points);
  key.quota_use = { period_start_ms: periodStart(quota.period, nowMs), used: isNegative(left) ? ZERO : left };
}

export function quotaView(key: StoredKey, nowMs: number): Record<string, unknown> | null {
  const quota = key.settings?.quota;
  if (!quota) return null;
  return { ...quota, used: current(key, nowMs), resets_at: formatTime(nextPeriodStart(quota.period, nowMs)) };
}
