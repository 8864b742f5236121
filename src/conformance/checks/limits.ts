import type { Check, CheckContext } from '../types.ts';
import type { Client } from '../client.ts';
import { balancesOf, endTask, limitedClient } from './control.ts';
import { body, expectError, needAnswer, notesInput, scenario } from './shared.ts';
import type { TaskBody } from './shared.ts';

const QUEUED = scenario('timeout-in-queue');

/** The account's tasks as its list shows them: a refused request must have created none. */
async function expectTaskCount(ctx: CheckContext, client: Client, count: number): Promise<void> {
  const listed = await client.request('GET', '/v1/tasks?limit=100');
  needAnswer(listed);
  const data = body<{ data: TaskBody[] }>(listed).data;
  ctx.expect(data.length === count, `the refused request created no task (${count} listed)`, listed, count, data.length);
}

/** Submits as `client`; anything but 200 ends the check, naming the submission. */
async function submitAs(client: Client, headers: Record<string, string>): Promise<TaskBody> {
  const submitted = await client.request('POST', '/v1/tasks', { body: notesInput(), headers });
  needAnswer(submitted);
  return body<TaskBody>(submitted);
}

export const limitChecks: Check[] = [
  {
    id: 'exercise.limits.rate',
    group: 'limits',
    title: "over a key's per-minute limit: 429 rate_limited in the general error shape with Retry-After in seconds, accepted again after it",
    cost: 0,
    needs: ['admin'],
    async run(ctx) {
      const client = await limitedClient(ctx, { rpm: 2 });
      for (let i = 0; i < 2; i += 1) needAnswer(await client.request('GET', '/v1/tasks?limit=1'));
      const refused = await client.request('GET', '/v1/tasks?limit=1');
      expectError(ctx, refused, 429, 'rate_limited');
      const message = (refused.json as { error?: { message?: unknown } } | undefined)?.error?.message;
      ctx.expect(typeof message === 'string' && message !== '', 'error.message says why', refused, 'a message', message);
      const retryAfter = refused.headers.get('retry-after');
      ctx.expect(/^\d+$/.test(retryAfter ?? '') && Number(retryAfter) >= 1 && Number(retryAfter) <= 60, 'Retry-After: whole seconds within the minute', refused, '1..60', retryAfter);
      await ctx.wait(Number(retryAfter));
      const again = await client.request('GET', '/v1/tasks?limit=1');
      ctx.expect(again.status === 200, `accepted again after Retry-After (${retryAfter ?? '?'} s)`, again, 200, again.status);
    },
  },
  {
    id: 'exercise.limits.quota',
    group: 'limits',
    title: "over a key's quota: 402 key_quota_exceeded, no task created, nothing frozen",
    cost: 40,
    needs: ['admin'],
    async run(ctx) {
      // 40 points a notes task: the first fits a quota of 50, the second would not.
      const client = await limitedClient(ctx, { quota: { points: '50.000', period: 'daily' } });
      const first = await submitAs(client, QUEUED);
      try {
        const refused = await client.request('POST', '/v1/tasks', { body: notesInput('over-quota'), headers: QUEUED });
        expectError(ctx, refused, 402, 'key_quota_exceeded');
        await expectTaskCount(ctx, client, 1);
        const balances = await balancesOf(ctx, client.accountId);
        ctx.expect(balances.frozen === first.points.frozen, 'only the first task is frozen', refused, first.points.frozen, balances.frozen);
      } finally {
        await client.request('POST', `/v1/tasks/${first.id}/cancel`);
      }
    },
  },
  {
    id: 'exercise.limits.concurrency',
    group: 'limits',
    title: "over a key's concurrency cap: 429 concurrency_limited while a task runs, no task created; accepted again once it ends",
    cost: 80,
    needs: ['admin'],
    async run(ctx) {
      const client = await limitedClient(ctx, { concurrency: 1 });
      // Processing, not queued: "running tasks" is what the reference counts.
      const running = await submitAs(client, scenario('slow'));
      try {
        await ctx.wait(31);
        const got = await client.request('GET', `/v1/tasks/${running.id}`);
        needAnswer(got);
        ctx.expect(body<TaskBody>(got).status === 'processing', 'the first task is running', got, 'processing', body<TaskBody>(got).status);
        const refused = await client.request('POST', '/v1/tasks', { body: notesInput('over-cap'), headers: QUEUED });
        expectError(ctx, refused, 429, 'concurrency_limited');
        await expectTaskCount(ctx, client, 1);
      } finally {
        await endTask(ctx, running.id);
      }
      const next = await client.request('POST', '/v1/tasks', { body: notesInput('after-cap'), headers: QUEUED });
      ctx.expect(next.status === 200, 'accepted again once the running task ended', next, 200, next.status);
      if (next.status === 200) await client.request('POST', `/v1/tasks/${body<TaskBody>(next).id}/cancel`);
    },
  },
];
