import { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { runStep } from './routing.ts';

/** Where a group of routes is added (src/app.ts: the /v1 `routeTable`). */
export interface Routes {
  get<P extends string>(path: P, handler: RequestHandler<ParamsOf<P>>): void;
  post<P extends string>(path: P, handler: RequestHandler<ParamsOf<P>>): void;
}

/** The parameters a path names (`/tasks/:id/cancel`: `{ id: string }`), as Express types them. */
type ParamsOf<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<string, never>;

/** A route's handler, as the table keeps it. */
type RouteHandler = RequestHandler;

interface Route {
  method: 'GET' | 'POST';
  /** The path's segments after the leading `/`: a literal, or `:name` for one non-empty segment. */
  segments: { literal: string | null; name: string | null }[];
  handler: RouteHandler;
}

/**
 * The /v1 routes as a table: every /v1 request passes its checks and then one route, and an Express Router between
 * the two cost a `GET /v1/tasks/{id}` more than most of its checks (its `handle` and `next` per layer, a regular
 * expression per route it tries). Paths match as the routers match them (ROUTING): exactly, case and trailing slash
 * counting, a `:name` one non-empty segment that must be valid percent-encoding (decoded into `req.params`, else
 * the router's own URIError with status 400), a HEAD taking the GET route.
 */
export function routeTable(): Routes & { match(method: string, path: string): { handler: RouteHandler; params: Record<string, string> } | null } {
  const routes: Route[] = [];
  const add = (method: Route['method']) => <P extends string>(path: P, handler: RequestHandler<ParamsOf<P>>): void => {
    const segments = path
      .slice(1)
      .split('/')
      .map((part) => (part.startsWith(':') ? { literal: null, name: part.slice(1) } : { literal: part, name: null }));
    routes.push({ method, segments, handler: handler as unknown as RouteHandler });
  };
  return {
    get: add('GET'),
    post: add('POST'),
    match(method, path) {
      const wanted = method === 'HEAD' ? 'GET' : method;
      if (!path.startsWith('/')) return null;
      const parts = path.slice(1).split('/');
      for (const route of routes) {
        if (route.method !== wanted || route.segments.length !== parts.length) continue;
        const params = matchSegments(route.segments, parts);
        if (params) return { handler: route.handler, params };
      }
      return null;
    },
  };
}

function matchSegments(segments: Route['segments'], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (segment.literal !== null) {
      if (segment.literal !== part) return null;
    } else if (part === '') {
      return null;
    } else {
      params[segment.name!] = decodeParam(part);
    }
  }
  return params;
}

/** As the router decodes a parameter: a segment that is no valid percent-encoding is its URIError with status 400. */
function decodeParam(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch (err) {
    if (err instanceof URIError) {
      err.message = `Failed to decode param '${part}'`;
      (err as URIError & { status?: number }).status = 400;
    }
    throw err;
  }
}

/**
 * One handler for a mount point: `checks`, then the route the table has for the request (`unrouted` when none),
 * errors through `onError` (an error handler of the mount point's own) and then on to the app's. As Express 5
 * runs a handler: one that throws or whose promise rejects passes that error on.
 */
export function dispatch(
  checks: RequestHandler,
  table: ReturnType<typeof routeTable>,
  unrouted: RequestHandler,
  onError: ErrorRequestHandler | null,
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const fail = (err: unknown): void => {
      if (onError) onError(err, req, res, next);
      else next(err);
    };
    // A route that calls `next()` hands the request on to `unrouted`, and `unrouted` to what follows the mount point.
    const notRouted = (): void => runStep(unrouted, req, res, fail, () => next());
    runStep(checks, req, res, fail, () => {
      let found: ReturnType<typeof table.match>;
      try {
        found = table.match(req.method, req.path);
      } catch (thrown) {
        fail(thrown);
        return;
      }
      if (!found) {
        notRouted();
        return;
      }
      req.params = found.params;
      runStep(found.handler, req, res, fail, notRouted);
    });
  };
}

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
