import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors/index.ts';
import { adminTokenCheck } from './admin-routes.ts';
import { bearerOf } from './api-key.ts';
import { ROUTING } from './routing.ts';

/**
 * The dashboard's sign-ins, kept by the emulator while it runs so that a link opened in a new tab is signed in
 * too: the browser holds only an opaque handle in an HttpOnly cookie, the token stays in this process (a restart
 * forgets them all). Shared by every world of one emulator: a session's token signs in through its world, and
 * the page reads it back with no token at all, which reaches the default world.
 */
export interface DashboardSignIns {
  keep(token: string): string;
  tokenOf(handle: string): string | undefined;
  forget(handle: string): void;
}

/** Enough for every tab and browser a team points at one emulator; the oldest goes first. */
const MAX_SIGN_INS = 64;

export function createDashboardSignIns(): DashboardSignIns {
  const held = new Map<string, string>();
  return {
    keep(token) {
      const handle = randomBytes(32).toString('base64url');
      held.set(handle, token);
      if (held.size > MAX_SIGN_INS) held.delete(held.keys().next().value as string);
      return handle;
    },
    tokenOf: (handle) => held.get(handle),
    forget: (handle) => void held.delete(handle),
  };
}

/** Where the cookie goes, and only there: no other request of the page (or of a served file) carries it. */
export const SIGN_IN_PATH = '/_emulator/ui/sign-in';

/**
 * Cookies ignore ports: each emulator on one host names its own, by the port the browser reached it on, so that
 * two emulators side by side do not sign each other's tabs out.
 */
const cookieName = (req: Request): string => {
  const port = /:(\d+)$/.exec(req.get('host') ?? '')?.[1] ?? String(req.socket.localPort ?? '');
  return `svc_emulator_dashboard_${port}`;
};

const handleOf = (req: Request): string | undefined => {
  const name = cookieName(req);
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
};

/**
 * Only the dashboard's own page may use the sign-in: the request carries the page's header (a cross-origin one
 * could send it only after a preflight this emulator never allows) and, where the browser says where it comes
 * from, comes from this very origin (a served file is shown in an opaque origin: cross-site; another port of
 * the same host is same-site, not same-origin).
 */
const fromTheDashboard: RequestHandler = (req, _res, next) => {
  if (req.get('x-emulator-client') !== 'dashboard') throw new ApiError('unauthorized', 'Only the dashboard page signs in here (X-Emulator-Client: dashboard).');
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') throw new ApiError('unauthorized', `A sign-in is kept for the dashboard's own page only, not for a request from ${site}.`);
  next();
};

const setCookie = (req: Request, res: Response, value: string, clear: boolean): void => {
  res.cookie(cookieName(req), value, { httpOnly: true, sameSite: 'strict', path: SIGN_IN_PATH, ...(clear ? { expires: new Date(0) } : {}) });
};

/** POST keeps the page's token (checked as the control API checks it), GET gives it back, DELETE forgets it. */
export function dashboardSignInRoutes(signIns: DashboardSignIns, tokens: readonly string[]): Router {
  const carriesToken = adminTokenCheck(tokens);
  const router = Router(ROUTING);
  router.post('/sign-in', fromTheDashboard, (req, res) => {
    if (!carriesToken(req)) throw new ApiError('unauthorized', 'Send the admin token as Authorization: Bearer <admin token>.');
    const old = handleOf(req);
    if (old !== undefined) signIns.forget(old);
    setCookie(req, res, signIns.keep(bearerOf(req) as string), false);
    res.status(204).end();
  });
  router.get('/sign-in', fromTheDashboard, (req, res) => {
    const handle = handleOf(req);
    // None held is the usual first visit, not a failure: the page asks for the token then.
    const token = (handle === undefined ? undefined : signIns.tokenOf(handle)) ?? null;
    res.set('Cache-Control', 'no-store').json({ token });
  });
  router.delete('/sign-in', fromTheDashboard, (req, res) => {
    const handle = handleOf(req);
    if (handle !== undefined) signIns.forget(handle);
    setCookie(req, res, '', true);
    res.status(204).end();
  });
  return router;
}
