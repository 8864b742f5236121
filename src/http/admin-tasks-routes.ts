import { Router } from 'express';
import { checkScenarios } from '../scenarios/index.ts';
import type { TaskFailureCode, TaskOutput, TaskStatus } from '../tasks/index.ts';
import { adminQuery, optionalBody, pageQueryOf } from './admin-query.ts';
import type { AdminDeps } from './admin-routes.ts';
import { requireObjectBody } from './json-body.ts';
import { ROUTING } from './routing.ts';

/** Steering tasks and scenarios from the control API. */
export function adminTasksRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.get('/tasks', (req, res) => {
    const query = adminQuery(contract, 'listAllTasks', req);
    res.json(
      control.tasks.list({
        ...pageQueryOf(query),
        ...(query['account'] !== undefined ? { account: String(query['account']) } : {}),
        ...(query['status'] !== undefined ? { status: query['status'] as TaskStatus } : {}),
        ...(query['model'] !== undefined ? { model: String(query['model']) } : {}),
      }),
    );
  });

  router.get('/tasks/:id', (req, res) => {
    res.json(control.tasks.get(req.params.id));
  });

  router.post('/tasks/:id/advance', (req, res) => {
    res.json(control.tasks.advance(req.params.id));
  });

  router.post('/tasks/:id/complete', (req, res) => {
    const body = contract.body<{ output?: Partial<TaskOutput> }>('admin', 'CompleteTaskRequest', optionalBody(req));
    res.json(control.tasks.complete(req.params.id, body.output));
  });

  router.post('/tasks/:id/fail', (req, res) => {
    const body = contract.body<{ code: Exclude<TaskFailureCode, 'canceled'>; message?: string }>(
      'admin',
      'FailTaskRequest',
      requireObjectBody(req),
    );
    res.json(control.tasks.fail(req.params.id, body.code, body.message));
  });

  // The same cancel as POST /v1/tasks/{id}/cancel, for any account's task (the dashboard has no API key).
  router.post('/tasks/:id/cancel', (req, res) => {
    res.json(control.tasks.cancel(req.params.id));
  });

  router.get('/scenarios', (_req, res) => {
    res.json(control.scenarios.list());
  });

  router.post('/scenarios', (req, res) => {
    res.status(201).json(control.scenarios.load(checkScenarios(contract, requireObjectBody(req))));
  });

  return router;
}
