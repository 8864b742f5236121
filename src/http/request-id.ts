import type { RequestHandler, Response } from 'express';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';

/** Gives every request its id first, so every answer (errors and unknown paths included) carries it. */
export function requestIds(random: Random): RequestHandler {
  return (_req, res, next) => {
    const id = ids.requestId(random);
    res.locals['requestId'] = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

export const requestIdOf = (res: Response): string => String(res.locals['requestId']);
