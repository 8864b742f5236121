import { errorOf } from '../../wire/index.ts';
import type { Exchange } from '../../wire/index.ts';
import type { Check, CheckContext } from '../types.ts';
import { endTask } from './control.ts';
import { body, expectRefundedEnd, needAnswer, notesInput, pollUntilTerminal, scenario, submitTask, TASK_FAILURE_CODES } from './shared.ts';
import type { TaskBody } from './shared.ts';

/** social-notes-data's maximum processing time ("Limits"). */
const NOTES_MAX_SECONDS = 10 * 60;

/** A failure the emulator brings about by scenario (scenarios/failures.yaml), and where in the task's life it falls. */
const FAILURES = [
  { id: 'exercise.tasks.failed-processing', code: 'generation_failed', started: true },
  { id: 'exercise.tasks.failed-queued', code: 'service_unavailable', started: false },
] as const;

/** Reads the task until it is `status` (at most `seconds` of the deployment's time); the last read. */
async function readUntil(ctx: CheckContext, id: string, status: string, seconds: number): Promise<{ got: Exchange; task: TaskBody }> {
  for (let waited = 0; ; waited += 5) {
    const got = await ctx.api.request('GET', `/v1/tasks/${id}`);
    needAnswer(got);
    const task = body<TaskBody>(got);
    if (task.status === status || waited >= seconds) return { got, task };
    await ctx.wait(5);
  }
}

/**
 * Cancels a processing task and holds the answer to what the reference allows: "most started tasks cannot be
 * canceled" (409 task_not_cancelable, the task going on unchanged), and one that can is canceled with a full refund.
 * @see reference "States and transitions" (processing → cancel) and POST /v1/tasks/{id}/cancel
 */
async function cancelProcessing(ctx: CheckContext, id: string): Promise<void> {
  const canceled = await ctx.api.request('POST', `/v1/tasks/${id}/cancel`);
  if (canceled.status === 200) {
    const task = body<TaskBody>(canceled);
    ctx.expect(task.status === 'canceled', 'a processing task canceled with 200 is canceled', canceled, 'canceled', task.status);
    ctx.expect(task.error?.code === 'canceled', 'error.code canceled', canceled, 'canceled', task.error?.code);
    expectRefundedEnd(ctx, canceled, task);
    return;
  }
  const { code } = errorOf(canceled);
  ctx.expect(canceled.status === 409 && code === 'task_not_cancelable', 'a processing task is canceled (200) or refused with 409 task_not_cancelable', canceled, '200 canceled or 409 task_not_cancelable', `${canceled.status} ${code ?? ''}`.trim());
  const after = await ctx.api.request('GET', `/v1/tasks/${id}`);
  needAnswer(after);
  const task = body<TaskBody>(after);
  ctx.expect(task.status === 'processing', 'a refused cancel leaves the task processing', after, 'processing', task.status);
  ctx.expect(task.points.refunded === '0.000' && task.points.charged === '0.000', 'a refused cancel refunds nothing', after, { charged: '0.000', refunded: '0.000' }, task.points);
}

export const taskEndChecks: Check[] = [
  ...FAILURES.map(
    ({ id, code, started }): Check => ({
      id,
      group: 'tasks',
      title: `a task that fails ${started ? 'while processing' : 'in the queue'} is failed with error.code ${code}, refunded in full, with finished_at and no output`,
      cost: 40,
      needs: ['admin'],
      async run(ctx) {
        const { task: submitted } = await submitTask(ctx, notesInput(), scenario(code));
        const { task, last } = await pollUntilTerminal(ctx, submitted.id, NOTES_MAX_SECONDS + 60);
        ctx.expect(task.status === 'failed', 'status failed', last, 'failed', task.status);
        ctx.expect(TASK_FAILURE_CODES.includes(task.error?.code ?? ''), 'error.code is a documented failure reason', last, TASK_FAILURE_CODES, task.error?.code);
        ctx.expect(task.error?.code === code, `error.code ${code}`, last, code, task.error?.code);
        ctx.expect(task.points.frozen === submitted.points.frozen, 'frozen as at submission', last, submitted.points.frozen, task.points.frozen);
        expectRefundedEnd(ctx, last, task);
        if (started) ctx.expect(task.started_at !== null, 'started_at set (it failed while processing)', last, 'a time', task.started_at);
        else ctx.expect(task.started_at === null, 'started_at null (it never started)', last, null, task.started_at);
      },
    }),
  ),
  {
    id: 'exercise.tasks.timeout',
    group: 'tasks',
    title: 'a task not finished within its maximum processing time fails with error.code timeout, refunded in full',
    cost: 40,
    needs: ['admin'],
    async run(ctx) {
      const { task: submitted } = await submitTask(ctx, notesInput(), scenario('timeout'));
      const { task, last } = await pollUntilTerminal(ctx, submitted.id, NOTES_MAX_SECONDS + 60);
      ctx.expect(task.status === 'failed' && task.error?.code === 'timeout', 'failed with error.code timeout', last, 'failed timeout', `${task.status} ${task.error?.code ?? ''}`.trim());
      expectRefundedEnd(ctx, last, task);
      const ran = (Date.parse(task.finished_at ?? '') - Date.parse(submitted.created_at ?? '')) / 1000;
      ctx.expect(ran >= NOTES_MAX_SECONDS, `not failed before the maximum time (${NOTES_MAX_SECONDS} s)`, last, `>= ${NOTES_MAX_SECONDS} s`, `${ran} s`);
    },
  },
  {
    id: 'exercise.tasks.cancel-processing',
    group: 'tasks',
    title: 'cancel of a processing task is 409 task_not_cancelable (task unchanged) or canceled with a full refund, nothing else',
    cost: 80,
    needs: ['admin'],
    async run(ctx) {
      // One task whose scenario the emulator lets be canceled while processing, one it does not: both answers are
      // the reference's, and each must be whole.
      const tasks = [(await submitTask(ctx, notesInput('cancel-a'), scenario('cancelable'))).task, (await submitTask(ctx, notesInput('cancel-b'), scenario('slow'))).task];
      try {
        for (const submitted of tasks) {
          const { got, task } = await readUntil(ctx, submitted.id, 'processing', 60);
          ctx.expect(task.status === 'processing' && task.started_at !== null, 'the task is processing, started_at set', got, 'processing', task.status);
          await cancelProcessing(ctx, submitted.id);
        }
      } finally {
        for (const task of tasks) await endTask(ctx, task.id);
      }
    },
  },
];
