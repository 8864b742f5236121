import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { invalidParams } from '../errors/index.ts';
import { selectScenario, SCENARIO_HEADER } from '../scenarios/index.ts';
import { findTask, listTasks, submitTask } from '../tasks/index.ts';
import type { ListQuery } from '../tasks/index.ts';
import { otherFileAddresses } from '../files/index.ts';
import { publicAddressProblems, webhookAddressProblemResolved } from '../webhooks/index.ts';
import { accountOf } from './api-key.ts';
import { callDetailsOf, recordCall } from './call-records.ts';
import { admissionOf } from './key-checks.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody, sendJson } from './json-body.ts';

/** @see reference "POST /v1/tasks", "GET /v1/tasks/{id}", "GET /v1/tasks (list)", "POST /v1/tasks/{id}/cancel" */
export function tasksRoutes(deps: AppDeps): Router {
  const { contract, db, clock, engine } = deps;
  const router = Router(ROUTING);

  router.post('/tasks', async (req, res) => {
    const account = accountOf(res);
    // Only the Idempotency-Key is read here; the signing headers are the signing check's, for keys that sign.
    const headers = contract.parameters('submitTask', 'header', { 'idempotency-key': req.headers['idempotency-key'] });
    const submission = contract.submission(requireObjectBody(req), { liftAddressPolicy: deps.config.allowInsecureWebhooks });
    if (submission.webhook_url !== null) {
      // Names are resolved before anything is read or written for the task: the rest of submit is synchronous.
      const problem = await webhookAddressProblemResolved(submission.webhook_url, deps.config.allowInsecureWebhooks, deps.resolveHost);
      if (problem) throw invalidParams([{ field: 'webhook_url', message: problem }]);
    }
    // File addresses that are not the emulator's own follow the same policy, names resolved here too; the verdicts
    // are applied inside the transaction, after the idempotency check (a replay answers the first task).
    const fileAddressProblems = await publicAddressProblems(
      otherFileAddresses(submission.model.schema, submission.input, deps.config.publicUrl),
      deps.config.allowInsecureWebhooks,
      deps.resolveHost,
    );
    const scenario = selectScenario(deps.scenarios, {
      model: submission.model.id,
      accountId: account.id,
      input: submission.input,
      metadata: submission.metadata,
      header: req.get(SCENARIO_HEADER),
    });
    const { task, replayed } = db.store.transaction(() => {
      const submitted = submitTask(
      {
        db,
        random: deps.random,
        nowMs: clock.now(),
        allowInsecureWebhooks: deps.config.allowInsecureWebhooks,
        publicUrl: deps.config.publicUrl,
        fileAddressProblems,
        admission: admissionOf(deps, res),
      },
      account,
      submission,
      headers['idempotency-key'] as string | undefined,
      scenario,
      );
      if (!submitted.replayed) engine.schedule(submitted.stored);
      callDetailsOf(res).task_id = submitted.task.id;
      callDetailsOf(res).model = submitted.task.model;
      recordCall(deps, res);
      return submitted;
    });
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    sendJson(res, task);
  });

  router.get('/tasks', (req, res) => {
    const query = contract.parameters('listTasks', 'query', req.query as Record<string, unknown>);
    sendJson(res, listTasks(db, accountOf(res).id, query as unknown as ListQuery));
  });

  router.get('/tasks/:id', (req, res) => {
    sendJson(res, findTask(db, accountOf(res).id, req.params.id).task);
  });

  router.post('/tasks/:id/cancel', (req, res) => {
    const task = db.store.transaction(() => {
      const canceled = engine.cancel(findTask(db, accountOf(res).id, req.params.id));
      recordCall(deps, res);
      return canceled;
    });
    sendJson(res, task);
  });

  return router;
}
