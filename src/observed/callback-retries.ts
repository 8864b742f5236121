import type { CallbackObservation, CheckInfo, Deviation } from './history.ts';

/** The delays, in seconds, from a failed delivery to the next attempt: 5 retries, 6 attempts in all. @see reference "Events" → Delivery */
export const RETRY_DELAYS_SECONDS: readonly number[] = [60, 300, 1800, 7200, 21600];

export const CALLBACK_RETRY_CHECKS = {
  schedule: {
    id: 'callbacks.retry.schedule',
    holds:
      'a failed delivery (answered other than 2xx) is retried under the same webhook-id 1 minute, 5 minutes, 30 minutes, 2 hours and 6 hours after the previous failure; a repeat within a second is a duplicate, one after a 2xx or after the sixth attempt a resend (a manual resend in between is not told apart)',
  },
} as const satisfies Record<string, CheckInfo>;
const C = CALLBACK_RETRY_CHECKS;

/** A repeat this soon after a delivery is the message sent again with it (a callback may arrive more than once). */
const DUPLICATE_MS = 1000;
/**
 * Early by more than this is early: an arrival is stamped when it comes, which on a clock moved on by steps may be
 * the end of the step that made it due (the suite's steps around a retry are a few seconds).
 */
const EARLY_MS = 5000;
/**
 * Late by more than this (and a twentieth of the delay) is late: a failure by timeout comes 10 s after the
 * delivery arrived, and the stamps may each be a second off.
 */
const LATE_MS = 12_000;
const LATE_SHARE = 0.05;

const delivered = (status: number): boolean => status >= 200 && status < 300;

/**
 * The deliveries of each callback message (one webhook-id), in the order they arrived, against the documented
 * retry schedule. Only a run of failures is judged, and only where the receiver's answer is known: the delay from
 * each failed delivery to the next one is the one documented for its place.
 * @see reference "Events" → Delivery
 */
export function checkCallbackRetries(callbacks: readonly CallbackObservation[]): Deviation[] {
  const found: Deviation[] = [];
  const byMessage = new Map<string, CallbackObservation[]>();
  for (const callback of callbacks) {
    const id = callback.headers['webhook-id'];
    if (id !== undefined) byMessage.set(id, [...(byMessage.get(id) ?? []), callback]);
  }
  for (const [id, deliveries] of byMessage) {
    const [first, ...rest] = [...deliveries].sort((a, b) => a.receivedMs - b.receivedMs);
    let previous = first;
    let failures = 0;
    for (const next of rest) {
      if (!previous || previous.answered === undefined || delivered(previous.answered)) break;
      const gapMs = next.receivedMs - previous.receivedMs;
      if (gapMs < DUPLICATE_MS) continue;
      failures += 1;
      const delay = RETRY_DELAYS_SECONDS[failures - 1];
      if (delay === undefined) break;
      if (gapMs < delay * 1000 - EARLY_MS || gapMs > delay * 1000 * (1 + LATE_SHARE) + LATE_MS) {
        found.push({
          check: C.schedule.id,
          message: `callback ${id}: delivery ${failures + 1} came ${seconds(gapMs)} s after delivery ${failures} failed (answered ${previous.answered}), documented: ${delay} s`,
          requestIds: [],
        });
      }
      previous = next;
    }
  }
  return found;
}

const seconds = (ms: number): string => String(Math.round(ms / 100) / 10);
