import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, endpointGroup, errorBody } from '../errors/index.ts';
import { requestIdOf } from './request-id.ts';

/** Unknown paths under /v1 and /_emulator answer 404 not_found in the group's shape. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApiError('not_found', `No route ${req.method} ${req.path}.`));
};

/**
 * The router refuses a path parameter that is not valid percent-encoding (a URIError with status 400): no
 * resource has such a name, so it is the endpoint's 404.
 */
function fromFramework(err: unknown): ApiError | null {
  if (err instanceof URIError && (err as URIError & { status?: number }).status === 400) {
    return new ApiError('not_found', 'No such resource: the path is not valid percent-encoding.');
  }
  return null;
}

/** The one place an error becomes a response. Anything that is not an ApiError is a 500 without internals. */
export function errorHandler(log: (message: string) => void): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const error = err instanceof ApiError ? err : fromFramework(err) ?? new ApiError('internal_error');
    if (error.code === 'internal_error') log(`${requestIdOf(res)} ${req.method} ${req.originalUrl}: ${String((err as Error)?.stack ?? err)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.locals['errorCode'] = error.code;
    res.status(error.status).json(errorBody(endpointGroup(req.originalUrl), error, requestIdOf(res)));
  };
}
