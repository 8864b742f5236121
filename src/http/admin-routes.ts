import { createHash, timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import { ROUTING } from './routing.ts';
import type { RequestHandler } from 'express';
import { createAccount, findAccount } from '../accounts/index.ts';
import type { StoredAccount } from '../accounts/index.ts';
import { toPoints } from '../billing/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { checkStateDocument } from '../state/index.ts';
import { webhookAddressProblemResolved } from '../webhooks/index.ts';
import { bearerOf } from './api-key.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/** `GET /_emulator/health`: the one control route that needs no token, mounted before the token check. */
export function adminHealthRoutes(deps: Pick<AppDeps, 'clock' | 'config'>): Router {
  const router = Router(ROUTING);
  router.get('/health', (_req, res) => {
    const clock = { now: formatTime(deps.clock.now()), mode: deps.clock.mode };
    const damage = deps.config.storeDamage;
    if (damage) return void res.status(503).json({ status: 'damaged', version: deps.config.version, clock, store: damage });
    res.json({ status: 'ok', version: deps.config.version, clock });
  });
  return router;
}

/** The emulator's control API under /_emulator, described by openapi/admin.yaml; mounted after adminAuth. */
export function adminRoutes(deps: AppDeps): Router {
  const { contract, db, clock } = deps;
  const router = Router(ROUTING);

  router.get('/clock', (_req, res) => {
    res.json({ now: formatTime(clock.now()), mode: clock.mode, speed: clock.speed });
  });

  router.post('/clock/advance', async (req, res) => {
    const body = contract.body<{ seconds: number }>('admin', 'AdvanceClockRequest', requireObjectBody(req));
    const now = await clock.advanceSeconds(body.seconds);
    // The time answered is on disk before the answer, even when nothing fell due on the way (every write stamps
    // the clock's position, and this one has nothing else to say): a restart never resumes before it.
    db.store.transaction(() => undefined);
    res.json({ now: formatTime(now), mode: clock.mode });
  });

  router.post('/clock/speed', async (req, res) => {
    const body = contract.body<{ speed: number }>('admin', 'ClockSpeedRequest', requireObjectBody(req));
    if (clock.mode !== 'real') {
      throw new ApiError('invalid_params', 'A manual clock has no speed; advance it instead.', [
        { field: 'speed', message: 'applies to a real clock only (this one is manual)' },
      ]);
    }
    clock.setSpeed(body.speed);
    // The clock's position is stamped on every write: this one has nothing else to say.
    db.store.transaction(() => undefined);
    res.json({ now: formatTime(clock.now()), mode: clock.mode, speed: clock.speed });
  });

  router.post('/accounts', async (req, res) => {
    const body = contract.body<{ points?: string; webhook_url?: string | null }>(
      'admin',
      'CreateAccountRequest',
      req.body === undefined ? {} : requireObjectBody(req),
    );
    if (body.webhook_url) {
      const problem = await webhookAddressProblemResolved(body.webhook_url, deps.config.allowInsecureWebhooks, deps.resolveHost);
      if (problem) throw new ApiError('invalid_params', `webhook_url ${problem}`, [{ field: 'webhook_url', message: problem }]);
    }
    const account = db.store.transaction(() =>
      createAccount(db, deps.random, clock.now(), {
        points: toPoints(body.points ?? '100000.000'),
        webhook_url: body.webhook_url ?? null,
      }),
    );
    res.status(201).json(accountView(account));
  });

  router.get('/accounts', (req, res) => {
    const query = contract.parameters('listAccounts', 'query', req.query as Record<string, unknown>, 'admin');
    // Accounts are few (a handful per test run), so a page is cut from them all; without a limit, every one.
    const all = db.accounts.all();
    const limit = query['limit'] === undefined ? null : Number(query['limit']);
    const page = Number(query['page']);
    const rows = limit === null ? all : all.slice((page - 1) * limit, page * limit);
    res.json(listPage(rows.map(accountView), query, { page, limit, has_more: limit !== null && all.length > page * limit }));
  });

  router.get('/accounts/:id', (req, res) => {
    res.json(accountView(findAccount(db, req.params.id)));
  });

  router.get('/accounts/:id/ledger', (req, res) => {
    const query = contract.parameters('getLedger', 'query', req.query as Record<string, unknown>, 'admin');
    const account = findAccount(db, req.params.id);
    if (query['after'] === undefined && query['limit'] === undefined) {
      const data = db.ledger.ofAccount(account.id);
      return void res.json({ object: 'list', data, count: data.length, has_more: false });
    }
    const after = Number(query['after'] ?? 0);
    const limit = Number(query['limit'] ?? 100);
    const data = db.ledger.page(account.id, { after, limit });
    const count = db.ledger.count(account.id);
    res.json({ object: 'list', data, count, has_more: (data.at(-1)?.n ?? after) < count });
  });

  router.post('/reset', (_req, res) => {
    const { accounts, keys } = deps.state.reset();
    res.json({ ok: true, accounts, keys });
  });

  router.post('/state/export', (_req, res) => {
    res.setHeader('Content-Disposition', 'attachment; filename="svc-emulator-state.json"');
    res.json(deps.state.export());
  });

  router.post('/state/import', (req, res) => {
    // Untrusted input: every field and the rules between records are checked before anything is replaced.
    const document = checkStateDocument(contract, requireObjectBody(req));
    res.json({ ok: true, ...deps.state.import(document) });
  });

  return router;
}

/** A row's version: a short hash of what the listing shows of it, for clients that keep the rows they read. */
export function versionOf(row: unknown): string {
  return createHash('sha256').update(JSON.stringify(row)).digest('base64url').slice(0, 12);
}

/**
 * A list answer with `versions`, the version of every row of the page in order; with `known` (versions the
 * client already holds) the rows it has are left out of `data`, which keeps the others in the page's order. The
 * client rebuilds the page from its own copies and the few rows sent: a quiet emulator answers a dashboard's
 * poll with a few bytes per list.
 */
export function listPage(rows: object[], query: Record<string, unknown>, paging: Record<string, unknown> = {}): Record<string, unknown> {
  const known = new Set(query['known'] === undefined ? [] : String(query['known']).split(','));
  const versions = rows.map(versionOf);
  return { object: 'list', data: rows.filter((_row, i) => !known.has(versions[i] as string)), ...paging, versions };
}

export function accountView(account: StoredAccount): Record<string, unknown> {
  const { previous_secrets, ...rest } = account;
  return {
    object: 'account',
    ...rest,
    concurrency: account.concurrency ?? null,
    previous_webhook_secrets: (previous_secrets ?? []).map((p) => ({ secret: p.secret, expires_at: formatTime(p.until_ms) })),
  };
}

/** 401 unauthorized unless the request carries the admin token; checked before the body is read. */
export function adminAuth(token: string): RequestHandler {
  const expected = Buffer.from(token);
  return (req, _res, next) => {
    const given = Buffer.from(bearerOf(req) ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ApiError('unauthorized', 'Send the admin token as Authorization: Bearer <admin token>.');
    }
    next();
  };
}
