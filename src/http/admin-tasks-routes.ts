import { Router } from 'express';
import { ROUTING } from './routing.ts';
import type { Request } from 'express';
import { ApiError } from '../errors/index.ts';
import { checkScenarios } from '../scenarios/index.ts';
import type { TaskFailureCode, TaskOutput } from '../tasks/index.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';
import { entry } from '../store/index.ts';

/**
 * Steering tasks and scenarios from the control API. Every step goes through the task engine, exactly as when
 * the clock brings it about.
 */
export function adminTasksRoutes(deps: AppDeps): Router {
  const { contract, store, engine } = deps;
  const router = Router(ROUTING);

  const taskOf = (id: string) => {
    const stored = entry(store.data.tasks, id);
    if (!stored) throw new ApiError('not_found', `No task '${id}'.`);
    return stored;
  };
  const optionalBody = (req: Request): Record<string, unknown> =>
    req.body === undefined ? {} : requireObjectBody(req);

  router.get('/tasks', (req, res) => {
    const query = contract.parameters('listAllTasks', 'query', req.query as Record<string, unknown>, 'admin');
    const all = Object.values(store.peek().tasks)
      .filter(
        (t) =>
          (query['account'] === undefined || t.account_id === query['account']) &&
          (query['status'] === undefined || t.task.status === query['status']) &&
          (query['model'] === undefined || t.task.model === query['model']),
      )
      .sort((a, b) => b.seq - a.seq)
      .slice(0, Number(query['limit']));
    res.json({ object: 'list', data: all.map((t) => ({ account_id: t.account_id, scenario: t.plan.scenario, task: t.task })) });
  });

  router.post('/tasks/:id/advance', async (req, res) => {
    const task = engine.step(taskOf(req.params.id));
    await deps.store.commit();
    res.json(task);
  });

  router.post('/tasks/:id/complete', async (req, res) => {
    const body = contract.body<{ output?: Partial<TaskOutput> }>('admin', 'CompleteTaskRequest', optionalBody(req));
    const task = engine.complete(taskOf(req.params.id), body.output);
    await deps.store.commit();
    res.json(task);
  });

  router.post('/tasks/:id/fail', async (req, res) => {
    const body = contract.body<{ code: Exclude<TaskFailureCode, 'canceled'>; message?: string }>(
      'admin',
      'FailTaskRequest',
      requireObjectBody(req),
    );
    const task = engine.fail(taskOf(req.params.id), body.code, body.message);
    await deps.store.commit();
    res.json(task);
  });

  // The same cancel as POST /v1/tasks/{id}/cancel, for any account's task (the dashboard has no API key).
  router.post('/tasks/:id/cancel', async (req, res) => {
    const task = engine.cancel(taskOf(req.params.id));
    await deps.store.commit();
    res.json(task);
  });

  router.get('/scenarios', (_req, res) => {
    res.json({ object: 'list', data: deps.scenarios.list() });
  });

  router.post('/scenarios', async (req, res) => {
    const scenarios = checkScenarios(contract, requireObjectBody(req));
    deps.scenarios.load(scenarios);
    await deps.store.commit();
    res.status(201).json({ object: 'list', data: scenarios });
  });

  return router;
}
