import { timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import type { Request, RequestHandler } from 'express';
import type { Contract } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import type { Control, NewAccountInput } from '../service/index.ts';
import { checkStateDocument } from '../state/index.ts';
import { adminQuery, optionalBody, pageQueryOf } from './admin-query.ts';
import { bearerOf } from './api-key.ts';
import { requireObjectBody } from './json-body.ts';
import { ROUTING } from './routing.ts';

/** What the control API's routes use: the contract to parse with, the control operations to call. */
export interface AdminDeps {
  contract: Contract;
  control: Control;
}

/** `GET /_emulator/health`: the one control route that needs no token, mounted before the token check. */
export function adminHealthRoutes({ control }: Pick<AdminDeps, 'control'>): Router {
  const router = Router(ROUTING);
  router.get('/health', (_req, res) => {
    const health = control.health();
    res.status(health.status === 'ok' ? 200 : 503).json(health);
  });
  return router;
}

/** The clock, accounts and the whole state, from the control API (openapi/admin.yaml); mounted after adminAuth. */
export function adminRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.get('/clock', (_req, res) => {
    res.json(control.clock.get());
  });

  router.post('/clock/advance', async (req, res) => {
    const body = contract.body<{ seconds: number }>('admin', 'AdvanceClockRequest', requireObjectBody(req));
    res.json(await control.clock.advance(body.seconds));
  });

  router.post('/clock/speed', (req, res) => {
    const body = contract.body<{ speed: number }>('admin', 'ClockSpeedRequest', requireObjectBody(req));
    res.json(control.clock.setSpeed(body.speed));
  });

  router.post('/accounts', async (req, res) => {
    const body = contract.body<NewAccountInput>('admin', 'CreateAccountRequest', optionalBody(req));
    res.status(201).json(await control.accounts.create(body));
  });

  router.get('/accounts', (req, res) => {
    res.json(control.accounts.list(pageQueryOf(adminQuery(contract, 'listAccounts', req))));
  });

  router.get('/accounts/:id', (req, res) => {
    res.json(control.accounts.get(req.params.id));
  });

  router.get('/accounts/:id/ledger', (req, res) => {
    const query = adminQuery(contract, 'getLedger', req);
    res.json(
      control.accounts.ledger(req.params.id, {
        ...(query['after'] !== undefined ? { after: Number(query['after']) } : {}),
        ...(query['limit'] !== undefined ? { limit: Number(query['limit']) } : {}),
      }),
    );
  });

  router.post('/reset', (_req, res) => {
    res.json(control.reset());
  });

  router.post('/state/export', (_req, res) => {
    res.setHeader('Content-Disposition', 'attachment; filename="svc-emulator-state.json"');
    res.json(control.state.export());
  });

  router.post('/state/import', (req, res) => {
    // Untrusted input: every field and the rules between records are checked before anything is replaced.
    res.json(control.state.import(checkStateDocument(contract, requireObjectBody(req))));
  });

  return router;
}

/** Whether a request carries one of `tokens` as its bearer token: each compared in constant time, all of them always (which one matched shows in no timing). */
export function adminTokenCheck(tokens: readonly string[]): (req: Request) => boolean {
  const expected = tokens.map((token) => Buffer.from(token));
  return (req) => {
    const given = Buffer.from(bearerOf(req) ?? '');
    let matched = false;
    for (const token of expected) matched = (given.length === token.length && timingSafeEqual(given, token)) || matched;
    return matched;
  };
}

/** 401 unauthorized unless the request carries the admin token; checked before the body is read. */
export function adminAuth(tokens: readonly string[]): RequestHandler {
  const carriesToken = adminTokenCheck(tokens);
  return (req, _res, next) => {
    if (!carriesToken(req)) throw new ApiError('unauthorized', 'Send the admin token as Authorization: Bearer <admin token>.');
    next();
  };
}

/**
 * A control request that still names a session when it reaches a world (`X-Emulator-Session`): the emulator
 * routes those it knows to their session and takes the header off, so this one names none (404, as for an id).
 */
export const unknownSession: RequestHandler = (req, _res, next) => {
  const named = req.get('x-emulator-session');
  if (named !== undefined) throw new ApiError('not_found', `No session ${named} on this emulator.`);
  next();
};
