import Big from 'big.js';
import { CheckFailure } from '../client.ts';
import type { Check } from '../types.ts';
import { POINTS } from '../../wire/index.ts';
import { body, expectError, needAnswer, notesInput, submitAndCancel, submitTask } from './shared.ts';
import type { TaskBody } from './shared.ts';

const unique = (): string => `conformance-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
// Scenario header for the emulator: stay queued so a cancel always refunds (ignored by other deployments).
const QUEUED = { 'X-Emulator-Scenario': 'timeout-in-queue' };

export const taskChecks: Check[] = [
  {
    id: 'tasks.submit.queued',
    group: 'tasks',
    title: 'submit answers a queued task with points frozen, normalized input and metadata echoed',
    cost: 40,
    async run(ctx) {
      const { submitted } = await submitAndCancel(ctx, { ...notesInput(), metadata: { order: '42' }, input: { note: 'n', agree: true, extra: 1 } }, QUEUED);
      const task = body<TaskBody>(submitted);
      ctx.expect(task.status === 'queued', 'status queued', submitted, 'queued', task.status);
      ctx.expect(task.points.frozen === '40.000', 'frozen 40.000', submitted, '40.000', task.points.frozen);
      ctx.expect(task.input['mode'] === 'note' && !('extra' in task.input), 'input normalized (default mode, unknown field dropped)', submitted, { mode: 'note' }, task.input);
      ctx.expect(task.metadata['order'] === '42', 'metadata echoed', submitted, { order: '42' }, task.metadata);
    },
  },
  {
    id: 'tasks.get.readable-at-once',
    group: 'tasks',
    title: 'a created task is readable at once, as submitted',
    cost: 40,
    async run(ctx) {
      const { submitted, task } = await submitTask(ctx, notesInput(), QUEUED);
      const got = await ctx.api.request('GET', `/v1/tasks/${task.id}`);
      needAnswer(got);
      ctx.expect(got.text === submitted.text, 'GET shows the submitted task', got, submitted.json, got.json);
      await ctx.api.request('POST', `/v1/tasks/${task.id}/cancel`);
    },
  },
  {
    id: 'tasks.list.paging',
    group: 'tasks',
    title: 'list pages newest first with page, limit and has_more, and filters by status',
    cost: 80,
    async run(ctx) {
      const first = body<TaskBody>((await submitAndCancel(ctx, notesInput('a'), QUEUED)).submitted).id;
      const second = body<TaskBody>((await submitAndCancel(ctx, notesInput('b'), QUEUED)).submitted).id;
      const page = await ctx.api.request('GET', '/v1/tasks?limit=1&status=canceled');
      needAnswer(page);
      const list = body<{ data: TaskBody[]; page: number; limit: number; has_more: boolean }>(page);
      ctx.expect(list.page === 1 && list.limit === 1 && list.has_more, 'page 1, limit 1, has_more', page, { page: 1, limit: 1, has_more: true }, list);
      ctx.expect(list.data[0]?.id === second, 'newest first', page, second, list.data[0]?.id);
      const nextPage = await ctx.api.request('GET', '/v1/tasks?limit=1&page=2&status=canceled');
      needAnswer(nextPage);
      const next = body<{ data: TaskBody[] }>(nextPage);
      ctx.expect(next.data[0]?.id === first, 'page 2 holds the older task', nextPage, first, next.data[0]?.id);
      const bad = await ctx.api.request('GET', '/v1/tasks?limit=101');
      expectError(ctx, bad, 422, 'invalid_params');
    },
  },
  {
    id: 'tasks.cancel.queued-and-terminal',
    group: 'tasks',
    title: 'cancel refunds a queued task in full; a second cancel is 409 task_not_cancelable',
    cost: 40,
    async run(ctx) {
      const { canceled } = await submitAndCancel(ctx, notesInput(), QUEUED);
      const task = body<TaskBody>(canceled);
      ctx.expect(task.status === 'canceled' && task.error?.code === 'canceled', 'canceled with error.code canceled', canceled, 'canceled', task.status);
      ctx.expect(task.points.refunded === task.points.frozen && task.points.charged === '0.000', 'full refund', canceled, task.points.frozen, task.points.refunded);
      const again = await ctx.api.request('POST', `/v1/tasks/${task.id}/cancel`);
      expectError(ctx, again, 409, 'task_not_cancelable');
    },
  },
  {
    id: 'tasks.idempotency.replay',
    group: 'tasks',
    title: 'the same Idempotency-Key and parameters answer the first task with Idempotent-Replayed: true',
    cost: 40,
    async run(ctx) {
      const key = unique();
      const { task: first } = await submitTask(ctx, notesInput(), { ...QUEUED, 'Idempotency-Key': key });
      const replay = await ctx.api.request('POST', '/v1/tasks', { body: notesInput(), headers: { ...QUEUED, 'Idempotency-Key': key } });
      needAnswer(replay);
      ctx.expect(replay.headers.get('idempotent-replayed') === 'true', 'Idempotent-Replayed: true', replay, 'true', replay.headers.get('idempotent-replayed'));
      ctx.expect(body<TaskBody>(replay).id === first.id, 'the first task', replay, first.id, body<TaskBody>(replay).id);
      await ctx.api.request('POST', `/v1/tasks/${first.id}/cancel`);
    },
  },
  {
    id: 'tasks.idempotency.conflict',
    group: 'tasks',
    title: 'the same Idempotency-Key with other parameters is 409 idempotency_conflict',
    cost: 40,
    async run(ctx) {
      const key = unique();
      const { task: first } = await submitTask(ctx, notesInput('x'), { ...QUEUED, 'Idempotency-Key': key });
      const other = await ctx.api.request('POST', '/v1/tasks', { body: notesInput('y'), headers: { ...QUEUED, 'Idempotency-Key': key } });
      expectError(ctx, other, 409, 'idempotency_conflict');
      await ctx.api.request('POST', `/v1/tasks/${first.id}/cancel`);
    },
  },
  {
    id: 'tasks.isolation.other-account',
    group: 'tasks',
    title: "another account's task is 404 not_found",
    cost: 40,
    needs: ['secondKey'],
    async run(ctx) {
      const { submitted } = await submitAndCancel(ctx, notesInput(), QUEUED);
      const other = ctx.other;
      if (!other) throw new CheckFailure('no second key', null);
      expectError(ctx, await other.request('GET', `/v1/tasks/${body<TaskBody>(submitted).id}`), 404, 'not_found');
    },
  },
  {
    id: 'billing.points.three-decimals',
    group: 'billing',
    title: 'points are strings with exactly three decimals, frozen = charged + refunded at a terminal state',
    cost: 40,
    async run(ctx) {
      const { submitted, canceled } = await submitAndCancel(ctx, notesInput(), QUEUED);
      for (const exchange of [submitted, canceled]) {
        const points = body<TaskBody>(exchange).points;
        for (const value of Object.values(points)) ctx.expect(POINTS.test(value), 'three decimals', exchange, 'd.ddd', value);
      }
      const points = body<TaskBody>(canceled).points;
      ctx.expect(new Big(points.charged).plus(points.refunded).eq(points.frozen), 'frozen = charged + refunded', canceled, points.frozen, points);
    },
  },
  ...(
    [
      ['billing.freeze.video-720p-5s', { model: 'video-gen-2.0-fast', input: { prompt: 'a cat', resolution: '720p', duration: 5 } }, '1188.000'],
      ['billing.freeze.video-480p-4s', { model: 'video-gen-2.0-fast', input: { prompt: 'a cat', resolution: '480p', duration: 4 } }, '388.800'],
      ['billing.freeze.avatar-standard', { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' } }, '60.000'],
      ['billing.freeze.notes-fixed', notesInput(), '40.000'],
    ] as const
  ).map(
    ([id, payload, frozen]): Check => ({
      id,
      group: 'billing',
      title: `freezes ${frozen} at submission`,
      cost: Number(frozen),
      async run(ctx) {
        const { submitted, canceled } = await submitAndCancel(ctx, payload, QUEUED);
        ctx.expect(body<TaskBody>(submitted).points.frozen === frozen, `frozen ${frozen}`, submitted, frozen, body<TaskBody>(submitted).points.frozen);
        ctx.expect(body<TaskBody>(canceled).points.refunded === frozen, 'refunded in full on cancel', canceled, frozen, body<TaskBody>(canceled).points.refunded);
      },
    }),
  ),
];
