import { cmp, sub, ZERO } from '../points/index.ts';
import type { LedgerKind } from '../billing/index.ts';
import type { Points } from '../points/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { TERMINAL } from './task.ts';
import type { Task, TaskFailureCode, TaskOutput } from './task.ts';

/** What can happen to a task. A timeout is a failure with code `timeout`. */
export type TaskEvent =
  | { type: 'start' }
  | { type: 'succeed'; output: TaskOutput; charge: Points }
  | { type: 'fail'; code: Exclude<TaskFailureCode, 'canceled'>; message?: string | null }
  | { type: 'cancel'; whileProcessing: boolean };

/** A points movement the transition needs on the task's account, in order. */
export interface Movement {
  kind: LedgerKind;
  points: Points;
}

export interface Transition {
  task: Task;
  movements: Movement[];
}

/** @see reference "Task failure reasons" */
export const FAILURE_MESSAGES: Record<TaskFailureCode, string> = {
  invalid_params: 'The parameters were unacceptable; the points were refunded.',
  content_rejected: 'The content failed review; the points were refunded.',
  insufficient_points: 'Points were insufficient; the task did not start and nothing was charged.',
  timeout: 'Generation timed out; the points were refunded.',
  service_unavailable: 'The model is temporarily unavailable; the points were refunded.',
  capacity_shortage: 'Platform compute is temporarily short; the points were refunded.',
  generation_failed: 'Generation failed; the points were refunded.',
  no_result: 'Nothing was found for the link, id or keyword; the points were refunded.',
  canceled: 'The task was canceled; the points were refunded.',
};

/**
 * The task state machine of the reference's transition table, as a pure function: the next task object and the
 * ledger movements that go with it. Refused transitions throw the API error a caller would see.
 * @see reference "States and transitions"
 */
export function transition(task: Task, event: TaskEvent, nowMs: number): Transition {
  const at = formatTime(nowMs);
  if (TERMINAL.has(task.status)) {
    if (event.type === 'cancel') {
      throw new ApiError('task_not_cancelable', `Task ${task.id} is already ${task.status}; it cannot be canceled.`);
    }
    throw new ApiError('task_finished', `Task ${task.id} is already ${task.status}.`);
  }
  const { frozen } = task.points;
  switch (event.type) {
    case 'start':
      if (task.status !== 'queued') throw new ApiError('task_finished', `Task ${task.id} has already started.`);
      return { task: { ...task, status: 'processing', started_at: at }, movements: [] };
    case 'succeed': {
      if (task.status !== 'processing') throw new ApiError('task_finished', `Task ${task.id} has not started.`);
      return { task: { ...task, status: 'succeeded', finished_at: at, output: event.output, ...settled(task, event.charge) }, movements: settlement(frozen, event.charge) };
    }
    case 'fail':
      return refundedInFull(task, 'failed', at, { code: event.code, message: event.message ?? FAILURE_MESSAGES[event.code] });
    case 'cancel':
      if (task.status === 'processing' && !event.whileProcessing) {
        throw new ApiError('task_not_cancelable', `Task ${task.id} has started processing; it cannot be canceled.`);
      }
      return refundedInFull(task, 'canceled', at, { code: 'canceled', message: FAILURE_MESSAGES.canceled });
  }
}

/** Failure, timeout and cancel all end the same way: nothing charged, everything frozen refunded. */
function refundedInFull(task: Task, status: 'failed' | 'canceled', at: string, error: NonNullable<Task['error']>): Transition {
  const { frozen } = task.points;
  return {
    task: { ...task, status, finished_at: at, points: { frozen, charged: ZERO, refunded: frozen }, error },
    movements: cmp(frozen, ZERO) > 0 ? [{ kind: 'refund', points: frozen }] : [],
  };
}

/**
 * Charged the actual amount. `frozen` stays what was frozen at submission; the freeze is released by a charge of
 * what it covers and a refund of what it does not need; a charge beyond the freeze is collected from available
 * as an entry of its own. So a succeeded task has refunded = max(0, frozen − charged), its ledger
 * collect = max(0, charged − frozen), and charged − collected + refunded = frozen.
 * @see reference "States and transitions" (succeeded: any over-frozen part refunded), "Model: video-gen-2.0-fast"
 * Rules (the difference refunded or collected afterward)
 */
function settled(task: Task, charge: Points): Pick<Task, 'points'> {
  const { frozen } = task.points;
  return { points: { frozen, charged: charge, refunded: cmp(charge, frozen) < 0 ? sub(frozen, charge) : ZERO } };
}

function settlement(frozen: Points, charge: Points): Movement[] {
  const fromFreeze = cmp(charge, frozen) < 0 ? charge : frozen;
  const movements: Movement[] = [];
  if (cmp(fromFreeze, ZERO) > 0) movements.push({ kind: 'charge', points: fromFreeze });
  if (cmp(charge, frozen) < 0) movements.push({ kind: 'refund', points: sub(frozen, charge) });
  if (cmp(charge, frozen) > 0) movements.push({ kind: 'collect', points: sub(charge, frozen) });
  return movements;
}
