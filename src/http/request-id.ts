import type { RequestHandler, Response } from 'express';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';

/** Gives every request its id first, so every answer (errors and unknown paths included) carries it. */
export function requestIds(random: Random): RequestHandler {
  return (req, res, next) => {
    const id = ids.requestId(random);
    res.locals['requestId'] = id;
    res.setHeader('X-Request-Id', id);
    // The Messages-style SDK reads its request id from `request-id`; the same id, so its errors can name it.
    if (req.path.startsWith('/v1/messages')) res.setHeader('request-id', id);
    next();
  };
}

export const requestIdOf = (res: Response): string => String(res.locals['requestId']);
