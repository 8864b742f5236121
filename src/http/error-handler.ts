import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, endpointGroup, errorBody } from '../errors/index.ts';
import { requestIdOf } from './request-id.ts';

/** Unknown paths under /v1 and /_emulator answer 404 not_found in the group's shape. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApiError('not_found', `No route ${req.method} ${req.path}.`));
};

/** The one place an error becomes a response. Anything that is not an ApiError is a 500 without internals. */
export function errorHandler(log: (message: string) => void): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const error = err instanceof ApiError ? err : new ApiError('internal_error');
    if (!(err instanceof ApiError)) log(`${requestIdOf(res)} ${req.method} ${req.originalUrl}: ${String((err as Error)?.stack ?? err)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.locals['errorCode'] = error.code;
    res.status(error.status).json(errorBody(endpointGroup(req.originalUrl), error, requestIdOf(res)));
  };
}
