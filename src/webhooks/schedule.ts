/**
 * Seconds from a failed automatic attempt to the next: 5 retries, 6 attempts in all.
 * @see reference "Events" → Delivery
 */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 21600] as const;

export const MAX_AUTOMATIC_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** When the next automatic attempt falls due after failed attempt number `attempt` (1-based), or null. */
export function nextAttemptMs(attempt: number, failedAtMs: number): number | null {
  const delay = RETRY_DELAYS_SECONDS[attempt - 1];
  return delay === undefined ? null : failedAtMs + delay * 1000;
}

/** How long a secret keeps signing after a rotation. @see reference "Limits": key rotation overlap 24 hours */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
