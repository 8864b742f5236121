import type { CheckContext, CheckInfo, Deviation, History } from './history.ts';
export { createObserver } from './observe.ts';
export type { Observer, TimedExchange } from './observe.ts';
import { CALLBACK_CHECKS, checkCallbacks } from './callbacks.ts';
import { CALLBACK_RETRY_CHECKS, checkCallbackRetries } from './callback-retries.ts';
import { checkConsequences, CONSEQUENCE_CHECKS } from './consequences.ts';
import { checkIdempotency, IDEMPOTENCY_CHECKS } from './idempotency.ts';
import { checkLifecycle, LIFECYCLE_CHECKS } from './lifecycle.ts';
import { checkListing, LISTING_CHECKS } from './listing.ts';
import { checkPaging, PAGING_CHECKS } from './paging.ts';
import { checkBalance, checkPoints, POINTS_CHECKS } from './points.ts';
import { readsByTask } from './reads.ts';
import { checkResults, RESULT_CHECKS } from './results.ts';
import { checkTexts, TEXT_CHECKS } from './text.ts';
import { checkIsolation, ISOLATION_CHECKS } from './isolation.ts';
import { checkPages, PAGE_CHECKS } from './pages.ts';
import { checkWireRules, WIRE_RULE_CHECKS } from './wire-rules.ts';
/** What the proxy's feed needs of the wire rules and the isolation rule: a key's short name, and which answers may deviate. */
export { answerMayDeviate } from './wire-rules.ts';
export { keyName } from './answer-view.ts';
/** What the suite's own checks of stop reasons, stream errors and callback retries hold answers to, as the rules do. */
export { ENDINGS, INCOMPLETE_REASONS, readAnswer } from './text-answer.ts';
export type { TextAnswer } from './text-answer.ts';
export { STREAM_ERROR_CODES, streamErrorProblem } from './text-error.ts';
export { RETRY_DELAYS_SECONDS } from './callback-retries.ts';

export type {
  AnswerObservation,
  CallbackObservation,
  CheckContext,
  CheckInfo,
  Deviation,
  History,
  ListPageObservation,
  OtherAccount,
  TaskObservation,
  TaskReadKind,
  TextCallObservation,
  TextFormat,
} from './history.ts';

/** Every check the observed-history checker runs, with what it holds. */
export const CHECKS: readonly CheckInfo[] = [LIFECYCLE_CHECKS, POINTS_CHECKS, IDEMPOTENCY_CHECKS, LISTING_CHECKS, TEXT_CHECKS, CALLBACK_CHECKS, CALLBACK_RETRY_CHECKS, PAGING_CHECKS, RESULT_CHECKS, CONSEQUENCE_CHECKS, WIRE_RULE_CHECKS, ISOLATION_CHECKS, PAGE_CHECKS].flatMap((group) => Object.values(group));

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
    found.push(...checkResults(id, taskReads));
  }
  for (const [id, taskReads] of withReplays) found.push(...checkBalance(id, taskReads));
  found.push(...checkIdempotency(history.tasks ?? [], reads));
  found.push(...checkListing(history.pages ?? [], reads));
  found.push(...checkPaging(history.pages ?? []));
  found.push(...checkTexts(history.texts ?? [], context));
  found.push(...checkCallbacks(history.callbacks ?? [], reads));
  found.push(...checkCallbackRetries(history.callbacks ?? []));
  found.push(...checkConsequences(history, reads, context.clockSkewMs ?? 1000));
  found.push(...checkWireRules(history.answers ?? [], reads));
  found.push(...checkIsolation(history));
  found.push(...checkPages(history.pages ?? [], history.tasks ?? []));
  return found;
}
