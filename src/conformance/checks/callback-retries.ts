import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Exchange } from '../../wire/index.ts';
import { CheckFailure } from '../client.ts';
import { failingAddress } from '../receiver.ts';
import type { Check, CheckContext, ReceivedCallback } from '../types.ts';
import { receiverRefused, refusedAsTheReferenceAllows } from './callbacks.ts';
import { body, needAnswer, notesInput, scenario } from './shared.ts';
import type { TaskBody } from './shared.ts';

/** The reference's delays after the first two failed deliveries ("Events" → Delivery: 1 minute, 5 minutes, …). */
const FIRST_DELAYS_SECONDS = [60, 300];
/** The delay after a third failure, had there been one: no attempt may come in it once one was answered 2xx. */
const THIRD_DELAY_SECONDS = 1800;
/** Real time a delivery the clock made due has to arrive; and real time given one that must not come. */
const ARRIVAL_MS = 5000;
const QUIET_MS = 250;

/** Waits in real time (the sender delivers after the clock step that made it due) until `count` have come. */
async function arrivals(list: () => ReceivedCallback[], count: number, ms: number): Promise<ReceivedCallback[]> {
  for (const until = Date.now() + ms; list().length < count && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  return list();
}

/**
 * The deliveries of one callback message, on the deployment's clock in whole seconds from the submission: the
 * suite only knows each arrived within a clock step, so each is a window [from, to].
 */
function createTimeline(ctx: CheckContext) {
  let now = 0;
  return {
    now: () => now,
    async advanceTo(at: number): Promise<void> {
      if (at > now) await ctx.wait(at - now);
      now = Math.max(now, at);
    },
  };
}

/** Each delivery verifies with the account's secret and is the task's terminal callback; the envelope's task id. */
function verified(ctx: CheckContext, submitted: Exchange, secret: string, delivery: ReceivedCallback, n: number): string | undefined {
  let envelope: { type?: string; data?: { id?: string } };
  try {
    envelope = new Webhook(secret).verify(delivery.raw, delivery.headers) as typeof envelope;
  } catch (err) {
    throw new CheckFailure(`delivery ${n} of ${delivery.headers['webhook-id'] ?? 'the callback'} does not verify: ${(err as Error).message}`, submitted, 'a valid signature', delivery.headers['webhook-signature']);
  }
  ctx.expect(envelope.type === 'task.succeeded', `delivery ${n} is the task.succeeded callback`, submitted, 'task.succeeded', envelope.type);
  return envelope.data?.id;
}

export const callbackRetryChecks: Check[] = [
  {
    id: 'exercise.callbacks.retry-same-id',
    group: 'callbacks',
    title: 'a callback answered 500 is retried after 1 minute, then 5 minutes, with the same webhook-id, signed; none after a 2xx',
    cost: 40,
    needs: ['admin', 'webhook'],
    async run(ctx) {
      const webhook = ctx.webhook;
      if (!webhook) throw new CheckFailure('no callback receiver', null);
      const failures = FIRST_DELAYS_SECONDS.length;
      const url = failingAddress(webhook.url, failures, `retry-${randomBytes(6).toString('hex')}`);
      const path = new URL(url).pathname;
      const mine = (): ReceivedCallback[] => webhook.received.filter((r) => r.path === path);
      const timeline = createTimeline(ctx);

      const submitted = await ctx.api.request('POST', '/v1/tasks', { body: { ...notesInput(), webhook_url: url }, headers: scenario('instant') });
      if (refusedAsTheReferenceAllows(submitted, url)) throw receiverRefused(webhook.url);
      needAnswer(submitted);
      const task = body<TaskBody>(submitted);
      // The task ends on the next clock step; its first delivery (answered 500) comes then.
      await timeline.advanceTo(1);
      let window: [number, number] = [0, 1];
      let got = await arrivals(mine, 1, ARRIVAL_MS);
      ctx.expect(got.length === 1, 'the first delivery arrives once the task ends', submitted, 1, got.length);

      for (const [i, delay] of [...FIRST_DELAYS_SECONDS, THIRD_DELAY_SECONDS].entries()) {
        const [from, to] = window;
        const attempts = i + 1;
        const last = i === failures;
        // Not before the delay can have passed since the failed attempt ...
        await timeline.advanceTo(from + delay - 1);
        got = await arrivals(mine, attempts + 1, QUIET_MS);
        ctx.expect(got.length === attempts, last ? `no delivery after one was answered 2xx (within ${delay} s)` : `no retry before ${delay} s after failed delivery ${attempts}`, submitted, attempts, got.length);
        if (last) break;
        // ... and by the time it has, whenever in its step the failed attempt came.
        await timeline.advanceTo(to + delay + 1);
        window = [from + delay - 1, timeline.now()];
        got = await arrivals(mine, attempts + 1, ARRIVAL_MS);
        ctx.expect(got.length === attempts + 1, `retried ${delay} s after failed delivery ${attempts}`, submitted, attempts + 1, got.length);
      }

      const ids = got.map((d) => d.headers['webhook-id']);
      ctx.expect(/^msg_/.test(ids[0] ?? '') && ids.every((id) => id === ids[0]), 'every delivery carries the same webhook-id (msg_…)', submitted, ids[0], ids);
      ctx.expect(got.map((d) => d.answered).join() === [...Array<number>(failures).fill(500), 200].join(), 'the receiver failed the first deliveries and accepted the last', submitted, [500, 500, 200], got.map((d) => d.answered));
      got.forEach((delivery, i) => {
        const id = verified(ctx, submitted, webhook.secret, delivery, i + 1);
        ctx.expect(id === task.id, `delivery ${i + 1} is of task ${task.id}`, submitted, task.id, id);
      });
    },
  },
];
