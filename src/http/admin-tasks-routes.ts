import { Router } from 'express';
import { ROUTING } from './routing.ts';
import type { Request } from 'express';
import { ApiError } from '../errors/index.ts';
import { checkScenarios } from '../scenarios/index.ts';
import type { StoredTask, TaskFailureCode, TaskOutput, TaskStatus } from '../tasks/index.ts';
import { listPage } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/**
 * Steering tasks and scenarios from the control API. Every step goes through the task engine, exactly as when
 * the clock brings it about.
 */
export function adminTasksRoutes(deps: AppDeps): Router {
  const { contract, db, engine } = deps;
  const router = Router(ROUTING);

  const taskOf = (id: string) => {
    const stored = db.tasks.get(id);
    if (!stored) throw new ApiError('not_found', `No task '${id}'.`);
    return stored;
  };
  const optionalBody = (req: Request): Record<string, unknown> =>
    req.body === undefined ? {} : requireObjectBody(req);

  router.get('/tasks', (req, res) => {
    const query = contract.parameters('listAllTasks', 'query', req.query as Record<string, unknown>, 'admin');
    const filter = {
      ...(query['account'] !== undefined ? { accountId: String(query['account']) } : {}),
      ...(query['status'] !== undefined ? { status: query['status'] as TaskStatus } : {}),
      ...(query['model'] !== undefined ? { model: String(query['model']) } : {}),
    };
    const limit = Number(query['limit']);
    const page = Number(query['page']);
    const { rows, hasMore } = db.tasks.page(filter, limit, (page - 1) * limit);
    res.json(listPage(rows.map(listEntry), query, { page, limit, has_more: hasMore }));
  });

  router.get('/tasks/:id', (req, res) => {
    const stored = taskOf(req.params.id);
    res.json({ ...listEntry(stored), webhook_url: stored.webhook_url ?? null, key: stored.key ?? null });
  });

  router.post('/tasks/:id/advance', (req, res) => {
    res.json(db.store.transaction(() => engine.step(taskOf(req.params.id))));
  });

  router.post('/tasks/:id/complete', (req, res) => {
    const body = contract.body<{ output?: Partial<TaskOutput> }>('admin', 'CompleteTaskRequest', optionalBody(req));
    res.json(db.store.transaction(() => engine.complete(taskOf(req.params.id), body.output)));
  });

  router.post('/tasks/:id/fail', (req, res) => {
    const body = contract.body<{ code: Exclude<TaskFailureCode, 'canceled'>; message?: string }>(
      'admin',
      'FailTaskRequest',
      requireObjectBody(req),
    );
    res.json(db.store.transaction(() => engine.fail(taskOf(req.params.id), body.code, body.message)));
  });

  // The same cancel as POST /v1/tasks/{id}/cancel, for any account's task (the dashboard has no API key).
  router.post('/tasks/:id/cancel', (req, res) => {
    res.json(db.store.transaction(() => engine.cancel(taskOf(req.params.id))));
  });

  router.get('/scenarios', (_req, res) => {
    res.json({ object: 'list', data: deps.scenarios.list() });
  });

  router.post('/scenarios', (req, res) => {
    const scenarios = checkScenarios(contract, requireObjectBody(req));
    deps.scenarios.load(scenarios);
    res.status(201).json({ object: 'list', data: scenarios });
  });

  return router;
}

/** A task as the control API lists it: with its account and the scenario it follows. */
const listEntry = (stored: StoredTask): { account_id: string; scenario: string; task: StoredTask['task'] } => ({
  account_id: stored.account_id,
  scenario: stored.plan.scenario,
  task: stored.task,
});
