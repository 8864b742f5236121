import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
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

interface Route {
  method: 'GET' | 'POST';
  /** The path's segments after the leading `/`: a literal, or `:name` for one non-empty segment. */
  segments: { literal: string | null; name: string | null }[];
  handler: RequestHandler;
}

/**
 * The /v1 routes as a table: every /v1 request passes its checks and then one route, and an Express Router between
 * the two cost a `GET /v1/tasks/{id}` more than most of its checks (its `handle` and `next` per layer, a regular
 * expression per route it tries). Paths match as the routers match them (ROUTING): exactly, case and trailing slash
 * counting, a `:name` one non-empty segment that must be valid percent-encoding (decoded into `req.params`, else
 * the router's own URIError with status 400), a HEAD taking the GET route.
 */
export function routeTable(): Routes & { match(method: string, path: string): { handler: RequestHandler; params: Record<string, string> } | null } {
  const routes: Route[] = [];
  const add = (method: Route['method']) => <P extends string>(path: P, handler: RequestHandler<ParamsOf<P>>): void => {
    const segments = path
      .slice(1)
      .split('/')
      .map((part) => (part.startsWith(':') ? { literal: null, name: part.slice(1) } : { literal: part, name: null }));
    routes.push({ method, segments, handler: handler as unknown as RequestHandler });
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
