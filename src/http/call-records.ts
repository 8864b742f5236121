import type { RequestHandler, Response } from 'express';
import type { CallDetails } from '../calls/index.ts';
import { formatTime } from '../clock/index.ts';
import type { AppDeps } from './context.ts';
import { requestIdOf } from './request-id.ts';

/**
 * Writes a call record for every /v1 request once its answer is done (or the client has gone): first in the
 * chain, so requests refused by authentication or a bad body are recorded too.
 * @see reference "What the service does": every /v1 request is recorded, including rejected ones
 */
export function callRecords(deps: Pick<AppDeps, 'clock' | 'store'>): RequestHandler {
  return (req, res, next) => {
    const atMs = deps.clock.now();
    const startedWall = deps.clock.wallNow();
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      const details = callDetailsOf(res);
      const account = res.locals['account'] as { id: string } | undefined;
      const key = res.locals['apiKey'] as { key: string } | undefined;
      const body = res.locals['errorCode'] as string | undefined;
      deps.store.data.calls[requestIdOf(res)] = {
        request_id: requestIdOf(res),
        at: formatTime(atMs),
        key: key?.key ?? null,
        account_id: account?.id ?? null,
        method: req.method,
        path: req.originalUrl.split('?')[0] ?? req.originalUrl,
        status: res.statusCode,
        error_code: details.error_code ?? body ?? null,
        // A refused request is found by the model it named too.
        model: details.model ?? modelNamedBy(req.body),
        ...(details.text ? { text: details.text } : {}),
        ...(details.task_id ? { task_id: details.task_id } : {}),
        latency_ms: deps.clock.wallNow() - startedWall,
      };
      void deps.store.commit();
    };
    // 'finish' when the answer is handed over (before the client reads it), 'close' when the client went first.
    res.once('finish', write);
    res.once('close', write);
    next();
  };
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
export function amendCall(deps: Pick<AppDeps, 'store'>, res: Response, patch: CallDetails): void {
  Object.assign(callDetailsOf(res), patch);
  const written = deps.store.data.calls[requestIdOf(res)];
  if (written) Object.assign(written, patch);
}
