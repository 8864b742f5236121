import type { Request, RequestHandler, Response, RouterOptions } from 'express';
import type { OpenAPIV3_1 } from 'openapi-types';

/**
 * Paths are matched exactly, as the documents name them: `/v1/taskS` and `/v1/tasks/` are unknown paths (404
 * not_found), not the list of tasks. Every Router is made with these options; the app sets the same two settings.
 */
export const ROUTING: RouterOptions = { caseSensitive: true, strict: true };

/**
 * The methods a path has (`['GET', 'POST']`), or null for a path no document names. The path is the whole
 * path as it arrived (`/v1/tasks/T1/cancel`), without the query.
 */
export type AllowedMethods = (path: string) => readonly string[] | null;

/** No path is known: every unrouted request is a 404. */
export const NO_METHODS: AllowedMethods = () => null;

/** The order methods are listed in an `Allow` header. */
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'] as const;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The methods of each path of the OpenAPI documents (openapi/service.yaml and admin.yaml), matched as the routers
 * match them: exactly (case and trailing slash count), a `{parameter}` standing for one non-empty path segment
 * that must be valid percent-encoding (the routers answer any other with 404, whatever the method).
 */
export function documentedMethods(documents: readonly OpenAPIV3_1.Document[]): AllowedMethods {
  const paths = documents.flatMap((document) =>
    Object.entries(document.paths ?? {}).map(([template, item]) => {
      const methods = METHODS.filter((method) => item?.[method] !== undefined).map((method) => method.toUpperCase());
      const pattern = template
        .split(/(\{[^}]+\})/)
        .map((part) => (/^\{[^}]+\}$/.test(part) ? '([^/]+)' : escapeRegExp(part)))
        .join('');
      return { matcher: new RegExp(`^${pattern}$`), methods };
    }),
  );
  return (path) => {
    for (const { matcher, methods } of paths) {
      const match = matcher.exec(path);
      if (match && match.slice(1).every(decodes)) return methods;
    }
    return null;
  };
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path a request arrived for, whole (mount points included) and without its query: `req.path` inside a
 * router is relative to the router's mount point. A request target in absolute form (`http://host/v1/tasks`)
 * is routed on its path, and named by it.
 */
export function requestPath(originalUrl: string): string {
  const path = originalUrl.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

/**
 * Express answers an OPTIONS request by itself (200, `Allow` from the one router it reached, HEAD added) when a
 * router has a path but no OPTIONS handler for it. No document gives any path OPTIONS, so it is a wrong method
 * like any other: this hands it to `unrouted` before any router of the API sees it.
 */
export function optionsTo(unrouted: RequestHandler): RequestHandler {
  return (req, res, next) => (req.method === 'OPTIONS' ? unrouted(req, res, next) : next());
}

/** `handler`, skipped for OPTIONS requests (for a router mounted before the checks that come first, such as the admin token). */
export function exceptOptions(handler: RequestHandler): RequestHandler {
  return (req, res, next) => (req.method === 'OPTIONS' ? next() : handler(req, res, next));
}

const isError = (err: unknown): boolean => err !== undefined && err !== null && err !== false;

/**
 * Runs `step` as Express 5 runs a handler: its `next(err)`, a throw or a rejected promise (Express 5 takes a
 * handler's promise) go to `fail`; its `next()` to `then`.
 */
export function runStep(step: RequestHandler, req: Request, res: Response, fail: (err: unknown) => void, then: () => void): void {
  try {
    const result: unknown = step(req, res, (err?: unknown) => (isError(err) ? fail(err) : then()));
    if (result instanceof Promise) result.catch((reason: unknown) => fail(reason ?? new Error('Rejected promise')));
  } catch (thrown) {
    fail(thrown);
  }
}

/**
 * The handlers one after another, as one handler: what a router does with a list of `use` layers, without a
 * layer's match and bookkeeping per step (every /v1 request passes all its checks). A handler that throws, or
 * passes an error on, ends the series with that error; after the last, the request goes on to what follows.
 */
export function series(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let at = 0;
    const step = (): void => {
      const handler = handlers[at++];
      if (handler === undefined) next();
      else runStep(handler, req, res, next, step);
    };
    step();
  };
}
