import { Router } from 'express';
import { cancelTask, findTask, listTasks, submitTask } from '../tasks/index.ts';
import type { ListQuery } from '../tasks/index.ts';
import { accountOf } from './api-key.ts';
import { commit } from './context.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/** @see reference "POST /v1/tasks", "GET /v1/tasks/{id}", "GET /v1/tasks (list)", "POST /v1/tasks/{id}/cancel" */
export function tasksRoutes(deps: AppDeps): Router {
  const { contract, store, clock } = deps;
  const router = Router();

  router.post('/tasks', async (req, res) => {
    const account = accountOf(res);
    const headers = contract.parameters('submitTask', 'header', req.headers);
    const submission = contract.submission(requireObjectBody(req));
    const idempotencyKey = headers['idempotency-key'] as string | undefined;
    const { task, replayed } = submitTask(
      {
        data: store.data,
        random: deps.random,
        nowMs: clock.now(),
        allowInsecureWebhooks: deps.config.allowInsecureWebhooks,
      },
      account,
      submission,
      idempotencyKey,
    );
    // A replay waits for the first request's write too: nothing is acknowledged before it is stored.
    await commit(deps);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.json(task);
  });

  router.get('/tasks', (req, res) => {
    const query = contract.parameters('listTasks', 'query', req.query as Record<string, unknown>);
    res.json(listTasks(store.data, accountOf(res).id, query as unknown as ListQuery));
  });

  router.get('/tasks/:id', (req, res) => {
    res.json(findTask(store.data, accountOf(res).id, req.params.id).task);
  });

  router.post('/tasks/:id/cancel', async (req, res) => {
    const stored = findTask(store.data, accountOf(res).id, req.params.id);
    const task = cancelTask(store.data, stored, clock.now());
    await commit(deps);
    res.json(task);
  });

  return router;
}
