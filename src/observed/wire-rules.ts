import type { AnswerObservation, CheckInfo, Deviation } from './history.ts';
import { idsOf, isTerminal, named } from './task-view.ts';
import type { TaskRead } from './task-view.ts';

export const WIRE_RULE_CHECKS = {
  retryAfter: { id: 'wire.retry-after.rate-limited', holds: 'a 429 carries Retry-After in whole seconds (all but concurrency_limited, for which the reference names none)' },
  streamHeaders: { id: 'text.stream.no-buffering', holds: 'an event stream is answered with Cache-Control: no-cache and X-Accel-Buffering: no' },
  cancelConflict: { id: 'tasks.cancel.conflict-code', holds: 'a cancel answered 409 says task_not_cancelable' },
  notFound: { id: 'tasks.not-found.code', holds: 'a task’s own path (GET /v1/tasks/{id}, its cancel) answered 404 says not_found' },
  nonJson: { id: 'text.bad-request.non-json', holds: 'a text call whose body is not a JSON object is answered 400 bad_request (a refusal of the key, its rate or the body’s size aside)' },
  unsupported: {
    id: 'text.responses.unsupported-refused',
    holds: 'a Responses-style call with previous_response_id or tools is answered 422 invalid_params (refusals of the key, model, points or limits aside)',
  },
  xApiKey: { id: 'text.messages.x-api-key', holds: 'a Messages-style call with its key in x-api-key is not refused 401 when the same key is accepted otherwise' },
  cancelTerminal: { id: 'tasks.cancel.terminal-conflict', holds: 'a cancel of a task already read in a terminal state is answered 409 (a rate limit aside)' },
} as const satisfies Record<string, CheckInfo>;
const C = WIRE_RULE_CHECKS;

const TEXT_PATHS = new Set(['/v1/chat/completions', '/v1/responses', '/v1/messages']);
const TASK_PATH = /^\/v1\/tasks\/([^/]+)(\/cancel)?$/;
/** Refusals that come before a body is read or its fields judged: the key, its rate, the body's size. */
const BEFORE_THE_BODY = new Set([401, 413, 429]);
/** Refusals of a Responses-style call the reference lets come before its fields: the key, the model, points, limits. */
const BEFORE_THE_FIELDS = new Set([...BEFORE_THE_BODY, 402, 403, 404]);

/**
 * Whether an answer alone may be found wrong by these rules (a 429, a stream, a task's own path, a text call), so
 * that a feeder judging after each answer can skip those that cannot (a model list is only evidence of a key).
 */
export function answerMayDeviate(a: AnswerObservation): boolean {
  return a.status === 429 || (a.headers.contentType ?? '').toLowerCase().startsWith('text/event-stream') || TASK_PATH.test(a.path) || (a.method === 'POST' && TEXT_PATHS.has(a.path));
}

/**
 * Each answer against what the request asked and what the history knew when it was sent. `reads` are every task
 * read (list items included), for the cancels of tasks already seen terminal.
 * @see reference "Common request headers" (Response headers), "Streaming", "Text endpoints (synchronous)",
 *   "POST /v1/tasks/{id}/cancel", "GET /v1/tasks/{id}", "Authentication" 1, "Errors" → "Codes"
 */
export function checkWireRules(answers: readonly AnswerObservation[], reads: ReadonlyMap<string, readonly TaskRead[]>): Deviation[] {
  const found: Deviation[] = [];
  // Keys the service accepted (any answer but 401), by name.
  const accepted = new Map<string, AnswerObservation>();
  for (const a of answers) if (a.key && a.status !== 401) accepted.set(a.key.id, accepted.get(a.key.id) ?? a);

  for (const a of answers) {
    const push = (check: CheckInfo, problem: string, ...others: { requestId: string | null }[]): void => {
      found.push({ check: check.id, message: `${a.method} ${a.path} answered ${a.status}${a.code ? ` ${a.code}` : ''} (${named(a)}): ${problem}`, requestIds: idsOf(...others, a) });
    };
    if (a.status === 429 && a.code !== 'concurrency_limited' && !/^\d+$/.test((a.headers.retryAfter ?? '').trim())) {
      push(C.retryAfter, a.headers.retryAfter === null ? 'no Retry-After' : `Retry-After ${JSON.stringify(a.headers.retryAfter)} is not whole seconds`);
    }
    const streamed = a.status >= 200 && a.status < 300 && (a.headers.contentType ?? '').toLowerCase().startsWith('text/event-stream');
    if (streamed) {
      const cache = (a.headers.cacheControl ?? '').split(',').map((d) => d.trim().toLowerCase());
      if (!cache.includes('no-cache')) push(C.streamHeaders, `Cache-Control is ${JSON.stringify(a.headers.cacheControl)}, without no-cache`);
      if ((a.headers.accelBuffering ?? '').trim().toLowerCase() !== 'no') push(C.streamHeaders, `X-Accel-Buffering is ${JSON.stringify(a.headers.accelBuffering)}, not no`);
    }

    const task = TASK_PATH.exec(a.path);
    const cancel = a.method === 'POST' && task?.[2] !== undefined;
    if (cancel && a.status === 409 && a.code !== 'task_not_cancelable') push(C.cancelConflict, 'a 409 to a cancel is task_not_cancelable');
    if (task && (cancel || a.method === 'GET') && a.status === 404 && a.code !== 'not_found') push(C.notFound, 'a 404 for a task is not_found');
    if (cancel && task?.[1] !== undefined && a.status !== 409 && a.status < 500 && !BEFORE_THE_BODY.has(a.status)) {
      // Another answer than this cancel's own (the same exchange's task read has its times), whole before it was sent.
      const own = (r: TaskRead): boolean => r.obs.kind === 'cancel' && r.obs.sentMs === a.sentMs && r.obs.receivedMs === a.receivedMs;
      const terminal = (reads.get(safeDecode(task[1])) ?? []).find((r) => isTerminal(r.view.status) && !own(r) && r.obs.receivedMs <= a.sentMs);
      if (terminal) push(C.cancelTerminal, `task ${task[1]} was read ${terminal.view.status} (${named(terminal.obs)}) before this cancel was sent`, terminal.obs);
    }

    if (a.method !== 'POST' || !TEXT_PATHS.has(a.path)) continue;
    if (a.body.kind === 'other' && !BEFORE_THE_BODY.has(a.status) && !(a.status === 400 && a.code === 'bad_request')) {
      push(C.nonJson, 'the body is not a JSON object: expected 400 bad_request');
    }
    if (a.path === '/v1/responses' && a.body.kind === 'object' && !BEFORE_THE_FIELDS.has(a.status) && !(a.status === 422 && a.code === 'invalid_params')) {
      const sent = a.body.fields.filter((f) => f === 'previous_response_id' || f === 'tools');
      if (sent.length > 0) push(C.unsupported, `${sent.join(' and ')} sent: expected 422 invalid_params`);
    }
    const other = a.key ? accepted.get(a.key.id) : undefined;
    if (a.path === '/v1/messages' && a.key?.via === 'x-api-key' && a.status === 401 && other) {
      push(C.xApiKey, `the key in x-api-key was refused, and accepted by ${a.method === other.method && a.path === other.path ? '' : `${other.method} ${other.path} `}${named(other)}`, other);
    }
  }
  return found;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
