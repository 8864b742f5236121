import type { RequestHandler, Response } from 'express';
import { ids } from '../random/index.ts';
import type { AppDeps } from './context.ts';
import { beginContext, contextOf } from './request-context.ts';

/**
 * The first step of every request: its id, so every answer (errors and unknown paths included) carries it, and
 * `ended` as the listener of the end of its answer (request-log.ts `answerEnded`: the call record, then the log
 * line). 'close' comes once per response, right after 'finish' or when the client went first. The listener is
 * one function for every request (it reads the response as `this`), so a request allocates no closure for it.
 */
export function requestIds(deps: Pick<AppDeps, 'random' | 'clock'>, ended: (this: Response) => void): RequestHandler {
  return (req, res, next) => {
    const id = ids.requestId(deps.random);
    beginContext(res, id, deps.clock.wallNow());
    res.setHeader('X-Request-Id', id);
    // The Messages-style SDK reads its request id from `request-id`; the same id, so its errors can name it.
    if (req.path.startsWith('/v1/messages')) res.setHeader('request-id', id);
    res.on('close', ended);
    next();
  };
}

export const requestIdOf = (res: Response): string => contextOf(res).requestId;

/** Real milliseconds since the request arrived. */
export const latencyOf = (deps: Pick<AppDeps, 'clock'>, res: Response): number => deps.clock.wallNow() - contextOf(res).startedWall;
