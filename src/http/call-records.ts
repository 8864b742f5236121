import type { Request, RequestHandler, Response } from 'express';
import type { CallDetails, CallRecord } from '../calls/index.ts';
import { formatTime, parseTime } from '../clock/index.ts';
import type { AppDeps } from './context.ts';
import { requestIdOf } from './request-id.ts';

type Deps = Pick<AppDeps, 'clock' | 'db'>;

/**
 * Writes a call record for every /v1 request once its answer is done (or the client has gone): first in the
 * chain, so requests refused by authentication or a bad body are recorded too. A route that changes state writes
 * its record in the same transaction as the change (`recordCall`), so a record is never lost while what it
 * records is kept; the end of the answer then writes the final status and latency over it.
 * @see reference "What the service does": every /v1 request is recorded, including rejected ones
 */
export function callRecords(deps: Deps): RequestHandler {
  return (req, res, next) => {
    const atMs = deps.clock.now();
    const startedWall = deps.clock.wallNow();
    // A request a reset overtook belongs to the store it began on: nothing of it goes into the fresh one.
    const epoch = deps.db.store.epoch;
    res.locals['callEpoch'] = epoch;
    res.locals['callRecord'] = (status: number): [CallRecord, number] => [recordOf(deps, req, res, atMs, startedWall, status), atMs];
    let written = false;
    const write = (): void => {
      if (written || deps.db.store.closed || deps.db.store.epoch !== epoch) return;
      written = true;
      const record = recordOf(deps, req, res, atMs, startedWall, res.statusCode);
      // Batched with the other answers of this turn: one commit per record would cost a read more than the read.
      deps.db.store.later(() => {
        if (deps.db.store.epoch === epoch) deps.db.calls.put(record, atMs);
      });
    };
    // 'finish' when the answer is handed over (before the client reads it), 'close' when the client went first.
    res.once('finish', write);
    res.once('close', write);
    next();
  };
}

function recordOf(deps: Deps, req: Request, res: Response, atMs: number, startedWall: number, status: number): CallRecord {
  const details = callDetailsOf(res);
  const account = res.locals['account'] as { id: string } | undefined;
  const key = res.locals['apiKey'] as { key: string } | undefined;
  const errorCode = res.locals['errorCode'] as string | undefined;
  return {
    request_id: requestIdOf(res),
    at: formatTime(atMs),
    key: key?.key ?? null,
    account_id: account?.id ?? null,
    method: req.method,
    path: req.originalUrl.split('?')[0] ?? req.originalUrl,
    status,
    error_code: details.error_code ?? errorCode ?? null,
    // A refused request is found by the model it named too.
    model: details.model ?? modelNamedBy(req.body),
    ...(details.text ? { text: details.text } : {}),
    ...(details.task_id ? { task_id: details.task_id } : {}),
    latency_ms: deps.clock.wallNow() - startedWall,
  };
}

/** Writes the call's record now, inside the caller's transaction, as answered with `status`. */
export function recordCall(deps: Pick<AppDeps, 'db'>, res: Response, status = 200): void {
  const build = res.locals['callRecord'] as ((status: number) => [CallRecord, number]) | undefined;
  if (build) deps.db.calls.put(...build(status));
}

function modelNamedBy(body: unknown): string | null {
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model.slice(0, 128) : null;
}

export function callDetailsOf(res: Response): CallDetails {
  res.locals['call'] ??= {};
  return res.locals['call'] as CallDetails;
}

/**
 * Adds to a call's record, whether or not it has been written yet: a stream whose client went away is settled
 * after the connection (and so the record) has closed.
 */
export function amendCall(deps: Pick<AppDeps, 'db'>, res: Response, patch: CallDetails): void {
  Object.assign(callDetailsOf(res), patch);
  const { db } = deps;
  if (db.store.closed || db.store.epoch !== res.locals['callEpoch']) return;
  db.store.transaction(() => {
    const written = db.calls.get(requestIdOf(res));
    if (written) db.calls.put({ ...written, ...patch }, parseTime(written.at));
  });
}
