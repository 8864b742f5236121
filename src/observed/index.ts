import type { CheckContext, CheckInfo, Deviation, History } from './history.ts';
export { createObserver } from './observe.ts';
export type { Observer, TimedExchange } from './observe.ts';
import { CALLBACK_CHECKS, checkCallbacks } from './callbacks.ts';
import { checkIdempotency, IDEMPOTENCY_CHECKS } from './idempotency.ts';
import { checkLifecycle, LIFECYCLE_CHECKS } from './lifecycle.ts';
import { checkListing, LISTING_CHECKS } from './listing.ts';
import { checkBalance, checkPoints, POINTS_CHECKS } from './points.ts';
import { readsByTask } from './reads.ts';
import { checkTexts, TEXT_CHECKS } from './text.ts';

export type {
  CallbackObservation,
  CheckContext,
  CheckInfo,
  Deviation,
  History,
  ListPageObservation,
  TaskObservation,
  TaskReadKind,
  TextCallObservation,
  TextFormat,
} from './history.ts';

/** Every check the observed-history checker runs, with what it holds. */
export const CHECKS: readonly CheckInfo[] = [LIFECYCLE_CHECKS, POINTS_CHECKS, IDEMPOTENCY_CHECKS, LISTING_CHECKS, TEXT_CHECKS, CALLBACK_CHECKS].flatMap((group) => Object.values(group));

/**
 * Judges what clients observed against the reference: a pure function of the history, no I/O and no clock.
 * Fed by the conformance suite and the checking proxy alike (one checker, two feeders).
 * @see reference (whole): "Task object", "States and transitions", "POST /v1/tasks", "GET /v1/tasks (list)",
 *   "Text endpoints (synchronous)", "Events"
 */
export function checkHistory(history: History, context: CheckContext = {}): Deviation[] {
  const reads = readsByTask(history, { replays: false });
  const withReplays = readsByTask(history, { replays: true });
  const found: Deviation[] = [];
  for (const [id, taskReads] of reads) {
    found.push(...checkLifecycle(id, taskReads, context.clockSkewMs ?? 1000));
    found.push(...checkPoints(id, taskReads, context.prices ?? {}));
  }
  for (const [id, taskReads] of withReplays) found.push(...checkBalance(id, taskReads));
  found.push(...checkIdempotency(history.tasks ?? [], reads));
  found.push(...checkListing(history.pages ?? [], reads));
  found.push(...checkTexts(history.texts ?? [], context));
  found.push(...checkCallbacks(history.callbacks ?? [], reads));
  return found;
}
