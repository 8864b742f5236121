import type { Exchange } from '../../wire/index.ts';
import type { Check, CheckContext } from '../types.ts';
import { body, needAnswer, scenario, submitTask } from './shared.ts';
import type { TaskBody } from './shared.ts';

// Stay queued, so that the cancel at the end always refunds (ignored by deployments other than the emulator).
const QUEUED = scenario('timeout-in-queue');
const unique = (): string => `conformance-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** Cancels what a check submitted, so a real deployment refunds it. */
async function cancel(ctx: CheckContext, id: string): Promise<void> {
  await ctx.api.request('POST', `/v1/tasks/${id}/cancel`);
}

/** `input[field]` is the number `value` (converted from the numeric string sent), not a string. */
function expectNumber(ctx: CheckContext, submitted: Exchange, field: string, value: number): void {
  const got = body<TaskBody>(submitted).input[field];
  ctx.expect(got === value, `input.${field} sent as "${value}" is the number ${value}`, submitted, value, got);
}

export const inputChecks: Check[] = [
  {
    id: 'tasks.input.numeric-string',
    group: 'tasks',
    title: 'a numeric string is converted to a number in the normalized input (social-notes-data page "3")',
    cost: 40,
    async run(ctx) {
      const { submitted, task } = await submitTask(ctx, { model: 'social-notes-data', input: { mode: 'search', keyword: 'paper boats', page: '3', agree: true } }, QUEUED);
      try {
        expectNumber(ctx, submitted, 'page', 3);
      } finally {
        await cancel(ctx, task.id);
      }
    },
  },
  {
    id: 'tasks.input.numeric-duration',
    group: 'tasks',
    title: 'numeric strings are converted before pricing: video duration "4" and seed "42" are numbers, and 4 s at 480p freezes 388.800',
    cost: 388.8,
    async run(ctx) {
      const payload = { model: 'video-gen-2.0-fast', input: { prompt: 'conformance: numbers as strings', resolution: '480p', duration: '4', seed: '42' } };
      const { submitted, task } = await submitTask(ctx, payload, QUEUED);
      try {
        expectNumber(ctx, submitted, 'duration', 4);
        expectNumber(ctx, submitted, 'seed', 42);
        ctx.expect(task.points.frozen === '388.800', 'frozen 388.800 (4 s × 97.2)', submitted, '388.800', task.points.frozen);
      } finally {
        await cancel(ctx, task.id);
      }
    },
  },
  {
    id: 'tasks.input.params-alias',
    group: 'tasks',
    title: '`params` is the other name of `input`: the task is made from it, and the same parameters sent as `input` under the same Idempotency-Key replay that task',
    cost: 40,
    async run(ctx) {
      const note = `https://notes.example.com/n/${unique()}`;
      const key = unique();
      const headers = { ...QUEUED, 'Idempotency-Key': key };
      const { submitted, task } = await submitTask(ctx, { model: 'social-notes-data', params: { note, agree: true } }, headers);
      try {
        const input = task.input;
        ctx.expect(input['mode'] === 'note' && input['note'] === note && input['agree'] === true, 'input is the normalized params (mode defaulted, note and agree as sent)', submitted, { mode: 'note', note, agree: true }, input);
        ctx.expect(task.points.frozen === '40.000', 'frozen 40.000', submitted, '40.000', task.points.frozen);
        const again = await ctx.api.request('POST', '/v1/tasks', { body: { model: 'social-notes-data', input: { note, agree: true } }, headers });
        // A replay, not a conflict: the header of replays is tasks.idempotency.replay's to judge.
        needAnswer(again);
        ctx.expect(body<TaskBody>(again).id === task.id, 'the same parameters sent as input answer the task made from params', again, task.id, body<TaskBody>(again).id);
      } finally {
        await cancel(ctx, task.id);
      }
    },
  },
];
