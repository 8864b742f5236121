import type { TaskSubmission } from '../../contract/index.ts';
import { invalidParams } from '../../errors/index.ts';
import { otherFileAddresses } from '../../files/index.ts';
import { selectScenario } from '../../scenarios/index.ts';
import { findTask, findTaskAnswer, listTasks, submitTask } from '../../tasks/index.ts';
import type { ListQuery, SubmitResult, Task, TaskPage } from '../../tasks/index.ts';
import { publicAddressProblems, webhookAddressProblemResolved } from '../../webhooks/index.ts';
import { admissionOf } from './admission.ts';
import type { ApiDeps, Caller } from './deps.ts';

export interface SubmitRequest {
  /** The body, checked by the contract. */
  submission: TaskSubmission;
  idempotencyKey?: string | undefined;
  /** X-Emulator-Scenario, as sent. */
  scenarioHeader?: string | undefined;
  /**
   * Runs inside the transaction that accepts the task, once it is known (a replay's too): what is written there
   * (the call's record) is never without the task, nor the task without it.
   */
  accepted?: (submitted: SubmitResult) => void;
}

/** The task endpoints of /v1. @see reference "POST /v1/tasks", "GET /v1/tasks/{id}", "GET /v1/tasks (list)" */
export function tasksApi(deps: ApiDeps) {
  const { db, clock, engine, config } = deps;
  return {
    /**
     * Accepts a submission: callback and file addresses checked with their names resolved (before the
     * transaction: the rest is synchronous), the scenario chosen, the task stored and scheduled.
     */
    async submitTask(caller: Caller, request: SubmitRequest): Promise<SubmitResult> {
      const { submission } = request;
      if (submission.webhook_url !== null) {
        const problem = await webhookAddressProblemResolved(submission.webhook_url, config.allowInsecureWebhooks, deps.resolveHost);
        if (problem) throw invalidParams([{ field: 'webhook_url', message: problem }]);
      }
      // File addresses that are not the emulator's own follow the same policy; the verdicts are applied inside the
      // transaction, after the idempotency check (a replay answers the first task).
      const fileAddressProblems = await publicAddressProblems(
        otherFileAddresses(submission.model.schema, submission.input, config.publicUrl),
        config.allowInsecureWebhooks,
        deps.resolveHost,
      );
      const scenario = selectScenario(deps.scenarios, {
        model: submission.model.id,
        accountId: caller.account.id,
        input: submission.input,
        metadata: submission.metadata,
        header: request.scenarioHeader,
      });
      return db.store.transaction(() => {
        const submitted = submitTask(
          {
            db,
            random: deps.random,
            nowMs: clock.now(),
            allowInsecureWebhooks: config.allowInsecureWebhooks,
            publicUrl: config.publicUrl,
            fileAddressProblems,
            admission: admissionOf(deps, caller),
          },
          caller.account,
          submission,
          request.idempotencyKey,
          scenario,
        );
        if (!submitted.replayed) engine.schedule(submitted.stored);
        request.accepted?.(submitted);
        return submitted;
      });
    },
    listTasks: (caller: Caller, query: ListQuery): TaskPage => listTasks(db, caller.account.id, query),
    getTask: (caller: Caller, id: string): Task => findTask(db, caller.account.id, id).task,
    /** The task as GET answers it: frozen, with its JSON made once per version of the task (a poll reads it again and again). */
    readTask(caller: Caller, id: string): { task: Readonly<Task>; json: string } {
      const { stored, json } = findTaskAnswer(db, caller.account.id, id);
      return { task: stored.task, json };
    },
    /** `changed` runs inside the cancel's transaction (the call's record goes with it). */
    cancelTask(caller: Caller, id: string, changed?: () => void): Task {
      return db.store.transaction(() => {
        const canceled = engine.cancel(findTask(db, caller.account.id, id));
        changed?.();
        return canceled;
      });
    },
  };
}
