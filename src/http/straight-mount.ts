import { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { runStep } from './routing.ts';

/**
 * Requests whose path begins with `prefix/` go to `handler` as if it were mounted there, past the app's router:
 * the same request and response objects (Express's prototypes, `req.originalUrl`, `req.baseUrl`, the path
 * relative to the mount point), `first` before it, as the app's first layer, and an error to `onError`, the
 * app's last. The app router's `handle` and `next` and a layer match per mount point were a tenth of a
 * `GET /v1/tasks/{id}`. Any other request, a target in absolute form (`http://host/v1/…`) included, goes through
 * the app as before.
 */
export function mountedStraight(app: Express, prefix: string, first: RequestHandler, handler: RequestHandler, onError: ErrorRequestHandler): void {
  // Express calls `app.handle` for every request (the app function is a call of it), and types it not.
  const handled = app as Express & { handle: AppHandle };
  const viaApp = handled.handle.bind(app);
  const start = `${prefix}/`;
  const failed = (req: Request, res: Response) => (err: unknown) => onError(err, req, res, () => undefined);
  handled.handle = (req, res, callback) => {
    const url = req.url;
    if (callback !== undefined || !url.startsWith(start)) {
      viaApp(req, res, callback);
      return;
    }
    // As Express's app.handle and its router's mount of `prefix` leave them.
    req.res = res;
    res.req = req;
    // Born with them on the server `expressBorn` made; a prototype changed per request costs more than the rest here.
    if (!Object.prototype.isPrototypeOf.call(app.request, req)) Object.setPrototypeOf(req, app.request);
    if (!Object.prototype.isPrototypeOf.call(app.response, res)) Object.setPrototypeOf(res, app.response);
    res.locals ??= Object.create(null) as Record<string, unknown>;
    req.originalUrl ??= url;
    req.baseUrl = '';
    const fail = failed(req, res);
    // Nothing under the prefix is answered by a later layer of the app: a request the handler passes on is an
    // unknown path (the handler's own `unrouted` answers every one it has no route for).
    runStep(first, req, res, fail, () => {
      req.baseUrl = prefix;
      req.url = url.slice(prefix.length);
      runStep(handler, req, res, fail, () => fail(new Error(`no answer for ${req.method} ${req.originalUrl}`)));
    });
  };
}

type AppHandle = (req: Request, res: Response, callback?: NextFunction) => void;

/**
 * Node's request and response constructors for a server of `app`: their objects are born with the app's Express
 * prototypes, so neither `mountedStraight` nor Express's own `handle` changes them (setting the prototype an
 * object already has changes nothing). Node's own constructors are plain functions, called here on the new object.
 */
export function expressBorn(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  function AppRequest(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>): void {
    Reflect.apply(IncomingMessage, this, args);
  }
  function AppResponse(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>): void {
    Reflect.apply(ServerResponse, this, args);
  }
  AppRequest.prototype = app.request;
  AppResponse.prototype = app.response;
  return { IncomingMessage: AppRequest as unknown as typeof IncomingMessage, ServerResponse: AppResponse as unknown as typeof ServerResponse };
}
