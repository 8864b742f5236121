import type { RequestHandler, Response } from 'express';
import { answerInjectedError, FAULT_ERRORS, shapeAnswer } from '../faults/index.ts';
import type { RequestFault } from '../faults/index.ts';
import { callDetailsOf } from './call-records.ts';
import type { AppDeps } from './context.ts';
import { contextOf } from './request-context.ts';
import { requestIdOf } from './request-id.ts';
import { requestPath } from './routing.ts';

/**
 * The last of the /v1 checks: the fault rules (`/_emulator/faults`, `--faults FILE`) see the request once its key,
 * account and body's model are known, before any route admits work. An error is answered here and a reset drops
 * the connection, so neither creates a task, freezes points or takes a concurrency slot (the per-minute rate was
 * counted already, as for every request past signing). Latency holds the request back; a latency between a
 * stream's events, a cut and a trickle shape the route's own answer as it goes out. `wait` is the app's clock's:
 * real milliseconds, cut short when the emulator closes.
 */
export function faultStep(deps: Pick<AppDeps, 'faults' | 'clock'>): RequestHandler {
  const { faults, clock } = deps;
  const wait = (ms: number): Promise<void> => clock.wait(ms);
  return (req, res, next) => {
    // The whole cost of the step while no rule is loaded.
    if (faults.empty) return next();
    const context = contextOf(res);
    const path = requestPath(req.originalUrl);
    const hit = faults.forRequest({ method: req.method, path, model: modelOf(req.body), key: context.key?.key, account: context.account?.id });
    if (!hit) return next();
    const { fault } = hit;
    callDetailsOf(res).injected_fault = { rule: hit.rule.id, kind: fault.kind };
    switch (fault.kind) {
      case 'error':
        return answerError(res, path, fault);
      case 'reset':
        // The call record (written on the response's 'close') says which rule dropped it.
        req.socket.destroy();
        return;
      case 'latency':
        if (fault.between_chunks) break;
        return holdBack(res, fault.ms, wait, next);
      case 'cut':
      case 'trickle':
        break;
    }
    shapeAnswer(res, fault, wait);
    next();
  };
}

function answerError(res: Response, path: string, fault: Extract<RequestFault, { kind: 'error' }>): void {
  const details = callDetailsOf(res);
  details.error_code = fault.code;
  const message = FAULT_ERRORS[fault.code]?.message;
  if (message !== undefined) details.error_message = message;
  contextOf(res).errorCode = fault.code;
  answerInjectedError(res, path, fault, requestIdOf(res));
}

/** The request goes on `ms` later, unless its client has given up by then: then nothing of it is done. */
async function holdBack(res: Response, ms: number, wait: (ms: number) => Promise<void>, next: () => void): Promise<void> {
  let gone = false;
  res.once('close', () => {
    gone = true;
  });
  await wait(ms);
  if (!gone) next();
}

/** The `model` a parsed JSON body names, if any. */
function modelOf(body: unknown): string | undefined {
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model : undefined;
}
