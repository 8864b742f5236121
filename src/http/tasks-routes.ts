import type { Contract } from '../contract/index.ts';
import { SCENARIO_HEADER } from '../scenarios/index.ts';
import type { Api } from '../service/index.ts';
import type { ListQuery } from '../tasks/index.ts';
import { callerOf } from './api-key.ts';
import { callDetailsOf, recordCall } from './call-records.ts';
import type { CallRecordDeps } from './call-records.ts';
import { requireObjectBody, sendJson, sendJsonText } from './json-body.ts';
import { noteTask } from './request-context.ts';
import type { Routes } from './route-table.ts';

export interface TasksRoutesDeps extends CallRecordDeps {
  contract: Contract;
  api: Pick<Api, 'submitTask' | 'listTasks' | 'readTask' | 'cancelTask'>;
  config: { readonly allowInsecureWebhooks: boolean };
}

/**
 * The task routes, added to `router` (the /v1 route table, src/app.ts).
 * @see reference "POST /v1/tasks", "GET /v1/tasks/{id}", "GET /v1/tasks (list)", "POST /v1/tasks/{id}/cancel"
 */
export function tasksRoutes(deps: TasksRoutesDeps, router: Routes): void {
  const { contract, api } = deps;

  router.post('/tasks', async (req, res) => {
    // Only the Idempotency-Key is read here; the signing headers are the signing check's, for keys that sign.
    const headers = contract.parameters('submitTask', 'header', { 'idempotency-key': req.headers['idempotency-key'] });
    const submission = contract.submission(requireObjectBody(req), { liftAddressPolicy: deps.config.allowInsecureWebhooks });
    const { task, replayed } = await api.submitTask(callerOf(res), {
      submission,
      idempotencyKey: headers['idempotency-key'] as string | undefined,
      scenarioHeader: req.get(SCENARIO_HEADER),
      accepted: (submitted) => {
        callDetailsOf(res).task_id = submitted.task.id;
        callDetailsOf(res).model = submitted.task.model;
        // Known here: the record need not read the task back for it.
        callDetailsOf(res).scenario = submitted.stored.plan.scenario;
        recordCall(deps, res);
      },
    });
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    noteTask(res, task);
    sendJson(res, task);
  });

  router.get('/tasks', (req, res) => {
    const query = contract.parameters('listTasks', 'query', req.query as Record<string, unknown>);
    sendJson(res, api.listTasks(callerOf(res), query as unknown as ListQuery));
  });

  router.get('/tasks/:id', (req, res) => {
    const { task, json } = api.readTask(callerOf(res), req.params.id);
    noteTask(res, task);
    sendJsonText(res, json, task);
  });

  router.post('/tasks/:id/cancel', (req, res) => {
    const task = api.cancelTask(callerOf(res), req.params.id, () => recordCall(deps, res));
    noteTask(res, task);
    sendJson(res, task);
  });
}
