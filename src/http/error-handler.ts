import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, endpointGroup, errorBody } from '../errors/index.ts';
import { diskFull, StoreFullError } from '../store/index.ts';
import { contextOf } from './request-context.ts';
import { requestIdOf } from './request-id.ts';
import { NO_METHODS, requestPath } from './routing.ts';
import type { AllowedMethods } from './routing.ts';

/**
 * Requests no route took, under /v1 and /_emulator, in the group's error shape: a path `allowed` knows is 405
 * method_not_allowed with an `Allow` header naming its methods; any other path is 404 not_found. Either names
 * the whole path, mount point included.
 */
export function unrouted(allowed: AllowedMethods): RequestHandler {
  return (req, _res, next) => {
    const path = requestPath(req.originalUrl);
    const methods = allowed(path);
    // A HEAD is answered by the GET route; a method the path has but no router took is no route at all.
    const has = (method: string): boolean => methods?.includes(method) === true || (method === 'HEAD' && methods?.includes('GET') === true);
    if (methods && methods.length > 0 && !has(req.method)) {
      const list = methods.join(', ');
      next(new ApiError('method_not_allowed', `${req.method} is not a method of ${path}; it takes ${list}.`, undefined, { Allow: list }));
      return;
    }
    next(new ApiError('not_found', `No route for ${req.method} ${path}.`));
  };
}

/** Unknown paths answer 404 not_found in the group's shape (for routers whose paths no document names). */
export const notFound: RequestHandler = unrouted(NO_METHODS);

/**
 * Errors that are no ApiError but have a documented answer. The router refuses a path parameter that is not
 * valid percent-encoding (a URIError with status 400): no resource has such a name, so it is the endpoint's 404.
 */
function fromFramework(err: unknown): ApiError | null {
  // A write of the files folder (an upload) that found the disk full; the store's own come as StoreFullError.
  if (diskFull(err)) return new StoreFullError('the files folder');
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
    contextOf(res).errorCode = error.code;
    res.status(error.status).json(errorBody(endpointGroup(req.originalUrl), error, requestIdOf(res)));
  };
}
