import { move } from '../accounts/index.ts';
import { freezeAmount, ZERO } from '../points/index.ts';
import { formatTime } from '../clock/index.ts';
import type { TaskSubmission } from '../contract/index.ts';
import { ApiError, invalidParams } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { checkFileParams } from '../files/index.ts';
import { admit } from '../keys/index.ts';
import type { Admission } from '../keys/index.ts';
import { planFor } from '../scenarios/index.ts';
import type { Scenario } from '../scenarios/index.ts';
import type { AccountsRepo, KeysRepo, StoredAccount } from '../accounts/index.ts';
import type { LedgerRepo } from '../billing/index.ts';
import type { FilesRepo } from '../files/index.ts';
import type { Store } from '../store/index.ts';
import type { IdempotencyRepo, StoredTask, TasksRepo } from './records.ts';
import { webhookAddressProblem } from '../webhooks/index.ts';
import type { AddressProblem } from '../webhooks/index.ts';
import { fingerprint } from './fingerprint.ts';
import type { Task } from './task.ts';

export interface SubmitContext {
  db: { store: Store; accounts: AccountsRepo; keys: KeysRepo; ledger: LedgerRepo; tasks: TasksRepo; idempotency: IdempotencyRepo; files: FilesRepo };
  random: Random;
  nowMs: number;
  allowInsecureWebhooks: boolean;
  /** The emulator's own address, to recognize its file addresses in file parameters. */
  publicUrl: string;
  /**
   * The address policy's verdict on the file addresses that are not the emulator's own, names resolved before the
   * transaction (`publicAddressProblems`); addresses missing here are checked as written.
   */
  fileAddressProblems?: ReadonlyMap<string, AddressProblem | null>;
  /** The key's quota and the concurrency caps, checked after the points. */
  admission: Admission;
}

export interface SubmitResult {
  stored: StoredTask;
  task: Task;
  replayed: boolean;
}

/**
 * Accepts a checked submission: idempotency first (a replay is answered even when points have since run
 * out, or its input files have since expired: the key never expires), then the file parameters, then the freeze,
 * then the task. Runs inside the caller's transaction, so two requests with one Idempotency-Key can never both
 * create a task, and a refusal halfway leaves nothing behind.
 * @see reference "POST /v1/tasks" rules 1, 3, 4 and 5
 */
export function submitTask(
  ctx: SubmitContext,
  account: StoredAccount,
  submission: TaskSubmission,
  idempotencyKey: string | undefined,
  scenario: Scenario,
): SubmitResult {
  const { db, nowMs } = ctx;
  if (submission.webhook_url !== null) {
    const problem = webhookAddressProblem(submission.webhook_url, ctx.allowInsecureWebhooks);
    if (problem) throw invalidParams([{ field: 'webhook_url', message: problem }]);
  }
  const previous = idempotencyKey === undefined ? undefined : db.idempotency.get(account.id, idempotencyKey);
  const inputPrint = fingerprint(submission.input);
  if (previous) {
    const first = db.tasks.get(previous.task_id);
    if (first && previous.model === submission.model.id && previous.input === inputPrint) {
      return { stored: first, task: first.task, replayed: true };
    }
    throw new ApiError(
      'idempotency_conflict',
      `Idempotency-Key '${idempotencyKey}' was first used with ${previous.model === submission.model.id ? 'different parameters' : `model '${previous.model}'`}; nothing was created.`,
    );
  }

  // File parameters come after the idempotency check: a replay answers the first task whatever has happened to
  // its files since (an uploaded file expires after 7 days; the key never does).
  const fileProblems = checkFileParams(
    submission.model.schema,
    submission.input,
    {
      db,
      accountId: account.id,
      publicUrl: ctx.publicUrl,
      nowMs,
      allowInsecure: ctx.allowInsecureWebhooks,
      ...(ctx.fileAddressProblems ? { addressProblems: ctx.fileAddressProblems } : {}),
    },
    submission.inputName,
  );
  if (fileProblems.length > 0) throw invalidParams(fileProblems);

  // Content review comes after the idempotency check: a replay answers the task that was accepted.
  if (scenario.outcome === 'rejected') {
    throw new ApiError(
      'content_rejected',
      scenario.rejection_message ?? 'The prompt or reference material failed content review; nothing was charged.',
    );
  }
  const frozen = freezeAmount(submission.model.pricing, submission.input);
  const id = uniqueTaskId(db, ctx.random, nowMs);
  const admitted = admit(ctx.admission, frozen); // quota, points, concurrency: throws before any change
  move(db, account.id, { kind: 'freeze', points: frozen, taskId: id, atMs: nowMs });
  admitted.started();
  const task: Task = {
    id,
    object: 'task',
    model: submission.model.id,
    status: 'queued',
    created_at: formatTime(nowMs),
    started_at: null,
    finished_at: null,
    input: submission.input,
    points: { frozen, charged: ZERO, refunded: ZERO },
    output: null,
    error: null,
    metadata: submission.metadata,
  };
  const stored = db.tasks.insert({
    task,
    account_id: account.id,
    idempotency_key: idempotencyKey ?? null,
    created_ms: nowMs,
    started_ms: null,
    webhook_url: submission.webhook_url,
    key: ctx.admission.key?.key ?? null,
    quota_taken: frozen,
    plan: planFor(scenario, task.model),
  });
  if (idempotencyKey !== undefined) db.idempotency.put(account.id, idempotencyKey, { task_id: id, model: task.model, input: inputPrint });
  return { stored, task, replayed: false };
}

function uniqueTaskId(db: { tasks: TasksRepo }, random: Random, nowMs: number): string {
  for (;;) {
    const id = ids.taskId(random, nowMs);
    if (!db.tasks.has(id)) return id;
  }
}
