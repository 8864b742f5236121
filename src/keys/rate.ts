/**
 * Requests per minute per key, over a sliding 60-second window on the virtual clock. Kept in memory: a restart
 * forgets the last minute, as a real service's limiter would.
 * @see reference "Limits": requests per minute, counted per key; 429 rate_limited with Retry-After
 */
export interface RateLimiter {
  /** Counts the request, or says in whole seconds when one would be accepted. */
  take(key: string, perMinute: number, nowMs: number): { ok: true } | { ok: false; retryAfterSeconds: number };
  clear(): void;
}

const WINDOW_MS = 60_000;

export function createRateLimiter(): RateLimiter {
  const windows = new Map<string, number[]>();
  return {
    take(key, perMinute, nowMs) {
      const recent = (windows.get(key) ?? []).filter((t) => t > nowMs - WINDOW_MS);
      windows.set(key, recent);
      if (recent.length >= perMinute) {
        // The oldest request in the window leaves it first; then one more fits.
        const oldest = recent[recent.length - perMinute] ?? nowMs;
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - nowMs) / 1000)) };
      }
      recent.push(nowMs);
      return { ok: true };
    },
    clear: () => windows.clear(),
  };
}
