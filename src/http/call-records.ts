import type { Request, RequestHandler, Response } from 'express';
import { errorParts, recordedHeaders, targetParts } from '../calls/index.ts';
import type { CallDetails, CallRecord } from '../calls/index.ts';
import { formatTime, parseTime } from '../clock/index.ts';
import type { AppDeps } from './context.ts';
import { contextOf } from './request-context.ts';
import type { CallStart } from './request-context.ts';
import { bodiesOf, noteBodies } from './call-bodies.ts';
import { latencyOf, requestIdOf } from './request-id.ts';

/** What writing call records takes: the clock, and the store with its call records (and tasks, for scenarios). */
export type CallRecordDeps = Pick<AppDeps, 'clock' | 'db'>;
type Deps = CallRecordDeps;

/**
 * Marks a /v1 request as one that leaves a call record; the record is written once its answer is done (or the
 * client has gone), by `endCall` from the request's end listener. First in the /v1 chain, so requests refused by
 * authentication or a bad body are recorded too. A route that changes state writes its record in the same
 * transaction as the change (`recordCall`), so a record is never lost while what it records is kept; the end of
 * the answer then writes the final status and latency over it.
 * @see reference "What the service does": every /v1 request is recorded, including rejected ones
 */
export function callRecords(deps: Deps & Pick<AppDeps, 'config'>): RequestHandler {
  // Two handlers, so that without `--record-content` the path asks nothing about bodies (issue 42 measures it).
  if (deps.config.recordContent) {
    return (_req, res, next) => {
      const start: CallStart = { atMs: deps.clock.now(), epoch: deps.db.store.epoch, ended: false };
      contextOf(res).callStart = start;
      res.json = jsonNotingErrors;
      start.bodies = noteBodies(res);
      next();
    };
  }
  return (_req, res, next) => {
    // A request a reset overtook belongs to the store it began on: nothing of it goes into the fresh one.
    const start: CallStart = { atMs: deps.clock.now(), epoch: deps.db.store.epoch, ended: false };
    contextOf(res).callStart = start;
    res.json = jsonNotingErrors;
    next();
  };
}

const startOf = (res: Response): CallStart | undefined => contextOf(res).callStart;

/**
 * `res.json` of a /v1 request: an error answer's message and details are kept for its record, as its body says
 * them, whichever code wrote it. One function for every request (it reads the response as `this`, and calls
 * Express's own `json` from the prototype), so a request allocates no closure for it.
 */
function jsonNotingErrors(this: Response, body: unknown): Response {
  const start = startOf(this);
  if (start && this.statusCode >= 400) start.error = errorParts(body);
  return (Object.getPrototypeOf(this) as Response).json.call(this, body);
}

/**
 * The end of a /v1 request's answer: its record, with the final status and latency, written with the other
 * answers of these few milliseconds (`putSoon`).
 */
export function endCall(deps: Deps, res: Response): void {
  const start = startOf(res);
  if (!start || deps.db.store.closed || deps.db.store.epoch !== start.epoch) return;
  start.ended = true;
  const record = recordOf(deps, res.req, res, start.atMs, res.statusCode);
  // A submit's record went with its transaction, a moment before its answer: written again only if the answer
  // changed more than the latency (a second write for a few microseconds was a fifth of a submit's store time).
  if (start.written !== undefined && start.written === withoutLatency(record)) return;
  deps.db.calls.putSoon(record, start.atMs);
}

/**
 * What `endCall` compares of a record: all but its latency, and but its headers, which are the one object made
 * once per call (`CallStart.headers`) and so the same in both.
 */
const withoutLatency = (record: CallRecord): string => {
  const { latency_ms: _latency, request_headers: _headers, ...rest } = record;
  return JSON.stringify(rest);
};

/** `formatTime` (whole seconds), remembering the last second: the requests of a burst share it. */
let lastTime: [second: number, text: string] = [NaN, ''];
function timeOf(atMs: number): string {
  const second = Math.floor(atMs / 1000);
  if (lastTime[0] !== second) lastTime = [second, formatTime(atMs)];
  return lastTime[1];
}

function recordOf(deps: Deps, req: Request, res: Response, atMs: number, status: number): CallRecord {
  const details = callDetailsOf(res);
  const { account, key, errorCode } = contextOf(res);
  const { path, query } = targetParts(req.originalUrl);
  const scenario = details.scenario ?? scenarioOfTask(deps, details);
  const start = startOf(res);
  const headers = start ? (start.headers ??= recordedHeaders(req.headers)) : recordedHeaders(req.headers);
  return {
    request_id: requestIdOf(res),
    at: timeOf(atMs),
    key: key?.key ?? null,
    account_id: account?.id ?? null,
    method: req.method,
    path,
    status,
    error_code: details.error_code ?? errorCode ?? null,
    // A refused request is found by the model it named too.
    model: details.model ?? modelNamedBy(req.body),
    ...(details.text ? { text: details.text } : {}),
    ...(details.task_id ? { task_id: details.task_id } : {}),
    latency_ms: latencyOf(deps, res),
    ...(query !== undefined ? { query } : {}),
    request_headers: headers,
    ...start?.error,
    // An error sent as a stream's event, not a body: the route says its message.
    ...(details.error_message !== undefined ? { error_message: details.error_message } : {}),
    ...(scenario !== undefined ? { scenario } : {}),
    ...(details.text_answer ? { text_answer: details.text_answer } : {}),
    ...(details.injected_fault ? { injected_fault: details.injected_fault } : {}),
    ...(start?.bodies ? { bodies: bodiesOf(req, res, start.bodies) } : {}),
  };
}

/**
 * The scenario of the task a submission made, when its route did not say it (`callDetailsOf(res).scenario`):
 * read once from the stored task and kept with the details, so the final record does not read it again.
 */
function scenarioOfTask(deps: Deps, details: CallDetails): string | undefined {
  if (details.task_id === undefined) return undefined;
  const scenario = deps.db.tasks.get(details.task_id)?.plan.scenario;
  if (scenario !== undefined) details.scenario = scenario;
  return scenario;
}

/** Writes the call's record now, inside the caller's transaction, as answered with `status`. */
export function recordCall(deps: Deps, res: Response, status = 200): void {
  const start = startOf(res);
  if (!start) return;
  const record = recordOf(deps, res.req, res, start.atMs, status);
  deps.db.calls.put(record, start.atMs);
  // Bodies are only known at the end; a record that keeps them is always written again then. Noted once the
  // write is committed: a record rolled back with its transaction is written at the end.
  if (start.bodies) return;
  const written = withoutLatency(record);
  start.written = undefined;
  if (deps.db.store.inTransaction) deps.db.store.afterCommit(() => (start.written = written));
  else start.written = written;
}

/** A request the HTTP server refused before the app had it (see refusals.ts): what is known of it. */
export interface RefusedCall {
  requestId: string;
  /** Empty when the request line was not read whole. */
  method: string;
  path: string;
  status: number;
  errorCode: string;
  latencyMs: number;
}

/** Writes the record of a refused request, with the answers of these few milliseconds; no key or account is known. */
export function recordRefused(deps: Deps, call: RefusedCall): void {
  if (deps.db.store.closed) return;
  const atMs = deps.clock.now();
  deps.db.calls.putSoon(
    {
      request_id: call.requestId,
      at: timeOf(atMs),
      key: null,
      account_id: null,
      method: call.method,
      path: call.path,
      status: call.status,
      error_code: call.errorCode,
      model: null,
      latency_ms: call.latencyMs,
    },
    atMs,
  );
}

function modelNamedBy(body: unknown): string | null {
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model.slice(0, 128) : null;
}

export function callDetailsOf(res: Response): CallDetails {
  return (contextOf(res).call ??= {});
}

/**
 * Adds to a call's record, whether or not it has been written yet: a stream whose client went away is settled
 * after the connection (and so the record) has closed. While the answer goes on, the record is written whole
 * (what the route has added so far included, as `recordCall` does); once it is over, the final record is read
 * back and the patch written over it.
 */
export function amendCall(deps: Deps, res: Response, patch: CallDetails): void {
  Object.assign(callDetailsOf(res), patch);
  const { db } = deps;
  const start = startOf(res);
  if (!start || db.store.closed || db.store.epoch !== start.epoch) return;
  if (!start.ended) {
    // One statement: the caller's transaction (a settlement's) needs no savepoint around it.
    if (db.store.inTransaction) recordCall(deps, res);
    else db.store.transaction(() => recordCall(deps, res));
    return;
  }
  db.store.transaction(() => {
    const written = db.calls.get(requestIdOf(res));
    if (written) db.calls.put({ ...written, ...patch }, parseTime(written.at));
  });
}
