import { move } from '../accounts/index.ts';
import { inTurns } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { TaskModelSpec } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import type { FileKeeper, FilesRepo } from '../files/index.ts';
import type { Logger } from '../log/index.ts';
import type { Random } from '../random/index.ts';
import type { AccountsRepo } from '../accounts/index.ts';
import type { LedgerRepo } from '../billing/index.ts';
import type { Store } from '../store/index.ts';
import type { StoredTask, TasksRepo } from './records.ts';
import { succeed } from './outcome.ts';
import { TERMINAL } from './task.ts';
import type { Task, TaskFailureCode, TaskOutput } from './task.ts';
import { transition } from './transition.ts';
import type { TaskEvent } from './transition.ts';

export interface EngineDeps {
  clock: Clock;
  db: { store: Store; accounts: AccountsRepo; ledger: LedgerRepo; tasks: TasksRepo; files: FilesRepo };
  random: Random;
  models: Map<string, TaskModelSpec>;
  files: FileKeeper;
  /** Read when a result is made: the address result files are served under. */
  publicUrl: () => string;
  fileRetentionMs: number;
  logger: Logger | null;
}

export type TerminalListener = (stored: StoredTask, atMs: number) => void;

/**
 * Runs tasks through their lives on the clock: each stored task's plan (fixed from its scenario at submission)
 * becomes scheduled transitions — start, finish, and the model's maximum processing time — and the control
 * API's steps go through the same `apply`. Jobs look the task up when they fire and do nothing if it has
 * moved on, so a control step, a cancel or a reset never needs to unschedule anything. Each job is one
 * transaction; the control API's steps run inside their request's.
 * Listeners run inside the transaction of the transition that ended the task.
 * @see reference "States and transitions"
 */
export interface TaskEngine {
  /** Schedules a task just stored by submit. */
  schedule(stored: StoredTask): void;
  /**
   * Schedules every unfinished task again (after a start or restart): the first page now (a damaged row in it
   * throws here, and stops a start), the rest a page a turn, so that a store of many starts answering as soon as
   * one of few. Until it is done the clock holds every jump of virtual time (a task not yet scheduled could be due
   * in it). Resolves once all are scheduled, or the store was replaced meanwhile (its own resume schedules the new
   * one); rejects if a later page cannot be read.
   */
  resume(): Promise<void>;
  /** The next transition, now: queued starts (or fails, if its plan fails in the queue), processing finishes. */
  step(stored: StoredTask): Task;
  complete(stored: StoredTask, output?: Partial<TaskOutput>): Task;
  fail(stored: StoredTask, code: Exclude<TaskFailureCode, 'canceled'>, message?: string): Task;
  cancel(stored: StoredTask): Task;
  onTerminal(listener: TerminalListener): void;
}

export function createTaskEngine(deps: EngineDeps): TaskEngine {
  const { clock, db } = deps;
  const listeners: TerminalListener[] = [];

  const modelOf = (stored: StoredTask): TaskModelSpec => {
    const model = deps.models.get(stored.task.model);
    if (!model) throw new Error(`task ${stored.task.id} has unknown model ${stored.task.model}`);
    return model;
  };

  function apply(stored: StoredTask, event: TaskEvent, atMs: number): Task {
    const from = stored.task.status;
    const next = transition(stored.task, event, atMs);
    for (const m of next.movements) move(db, stored.account_id, { ...m, taskId: stored.task.id, atMs });
    stored.task = next.task;
    if (event.type === 'start') stored.started_ms = atMs;
    db.tasks.put(stored);
    // Said once it happened: a transition rolled back with its transaction never did.
    const { task } = stored;
    db.store.afterCommit(() => logTransition(stored.account_id, task, from));
    if (event.type === 'start') scheduleFinish(stored);
    if (TERMINAL.has(stored.task.status)) for (const listener of listeners) listener(stored, atMs);
    return stored.task;
  }

  function logTransition(account: string, task: Task, from: Task['status']): void {
    const fields = {
      task_id: task.id,
      account,
      model: task.model,
      from,
      to: task.status,
      ...(task.error ? { error_code: task.error.code } : {}),
    };
    if (task.status === 'failed') deps.logger?.info(`task ${task.status}`, fields);
    else deps.logger?.debug(`task ${task.status}`, fields);
  }

  function finish(stored: StoredTask, atMs: number, output?: Partial<TaskOutput>): Task {
    const { plan } = stored;
    if (plan.outcome === 'failed' && plan.failure && output === undefined) {
      return apply(stored, { type: 'fail', code: plan.failure.code, message: plan.failure.message }, atMs);
    }
    const result = succeed(
      {
        db,
        random: deps.random,
        publicUrl: deps.publicUrl(),
        fileRetentionMs: deps.fileRetentionMs,
        onFile: deps.files.track,
      },
      stored,
      modelOf(stored),
      atMs,
      output ?? null,
    );
    return apply(stored, { type: 'succeed', ...result }, atMs);
  }

  /** The first move of a queued task: start, or fail in the queue when the plan says so. */
  function leaveQueue(stored: StoredTask, atMs: number): Task {
    const { failure, outcome } = stored.plan;
    if (outcome === 'failed' && failure?.during === 'queued') {
      return apply(stored, { type: 'fail', code: failure.code, message: failure.message }, atMs);
    }
    return apply(stored, { type: 'start' }, atMs);
  }

  /** A clock job for one task: runs only if the task is still in the state the job was scheduled for. */
  const job =
    (id: string, status: Task['status'], run: (stored: StoredTask, atMs: number) => unknown) =>
    (atMs: number): void => {
      db.store.transaction(() => {
        const stored = db.tasks.get(id);
        if (stored?.task.status !== status) return;
        run(stored, atMs);
      });
    };

  function scheduleFinish(stored: StoredTask): void {
    const { processing_ms } = stored.plan;
    if (processing_ms === null || stored.started_ms === null) return;
    clock.at(stored.started_ms + processing_ms, job(stored.task.id, 'processing', (s, at) => finish(s, at)));
  }

  function schedule(stored: StoredTask): void {
    const id = stored.task.id;
    if (stored.task.status === 'queued') {
      clock.at(stored.created_ms + stored.plan.queue_ms, job(id, 'queued', leaveQueue));
    } else if (stored.task.status === 'processing') {
      scheduleFinish(stored);
    } else {
      return;
    }
    const timeout = (s: StoredTask, at: number): Task => apply(s, { type: 'fail', code: 'timeout' }, at);
    const deadline = stored.created_ms + modelOf(stored).maxProcessingSeconds * 1000;
    clock.at(deadline, job(id, 'queued', timeout));
    clock.at(deadline, job(id, 'processing', timeout));
  }

  return {
    schedule(stored) {
      deps.logger?.debug('task queued', { task_id: stored.task.id, account: stored.account_id, model: stored.task.model, scenario: stored.plan.scenario });
      schedule(stored);
    },
    resume() {
      const { epoch } = db.store;
      return inTurns(clock, () => db.store.epoch === epoch && !db.store.closed, db.tasks.unfinishedAfter, schedule);
    },
    step(stored) {
      const now = clock.now();
      switch (stored.task.status) {
        case 'queued':
          return leaveQueue(stored, now);
        case 'processing':
          // A task that would never finish on its own has its timeout as its next transition.
          return stored.plan.processing_ms === null
            ? apply(stored, { type: 'fail', code: 'timeout' }, now)
            : finish(stored, now);
        default:
          throw new ApiError('task_finished', `Task ${stored.task.id} is already ${stored.task.status}.`);
      }
    },
    complete(stored, output = {}) {
      const now = clock.now();
      if (stored.task.status === 'queued') apply(stored, { type: 'start' }, now);
      if (stored.task.status !== 'processing') {
        throw new ApiError('task_finished', `Task ${stored.task.id} is already ${stored.task.status}.`);
      }
      return finish(stored, now, output);
    },
    fail: (stored, code, message) => apply(stored, { type: 'fail', code, message: message ?? null }, clock.now()),
    cancel: (stored) =>
      apply(stored, { type: 'cancel', whileProcessing: stored.plan.cancelable_while_processing }, clock.now()),
    onTerminal: (listener) => void listeners.push(listener),
  };
}
