import { randomBytes } from 'node:crypto';
import { RETRY_DELAYS_SECONDS } from '../../observed/index.ts';
import { createClient } from '../client.ts';
import { failingAddress } from '../receiver.ts';
import { controlRequest } from '../setup.ts';
import type { Check, CheckContext, ReceivedCallback } from '../types.ts';
import { adminOf } from './control.ts';
import { arrived, expectCallbackDetails, ownAddress, signedWith, submitCalledBack, waitUntil, webhookOf } from './callback-details.ts';
import { body, needAnswer, scenario } from './shared.ts';
import type { TaskBody } from './shared.ts';

// Callback deliveries over time: every retry of a message that keeps failing, at the documented gaps, and the
// signatures of a key rotation while both secrets sign and after.

/** Real time given a delivery that must not come (the clock step that would have made it due is over). */
const QUIET_MS = 200;
/** "Key rotation overlap": 24 hours. */
const OVERLAP_SECONDS = 24 * 3600;

/**
 * The deployment's time in whole seconds from the check's start, moved on through `ctx.wait`: a delivery is known
 * only to have come within a clock step, so each is a window [from, to].
 */
function timeline(ctx: CheckContext): { now(): number; advanceTo(at: number): Promise<void> } {
  let now = 0;
  return {
    now: () => now,
    async advanceTo(at) {
      if (at > now) await ctx.wait(at - now);
      now = Math.max(now, at);
    },
  };
}

/** An account of the check's own, its key, and its signing secret, made through the control API. */
async function ownAccount(ctx: CheckContext): Promise<{ id: string; key: string; secret: string }> {
  const admin = adminOf(ctx);
  const made = await controlRequest(admin, 'POST', '/_emulator/accounts', { points: '1000.000' });
  const account = made.json as { id?: string; webhook_secret?: string } | undefined;
  ctx.expect(made.status === 201 && typeof account?.id === 'string' && typeof account.webhook_secret === 'string', 'the control API makes an account', null, 201, made.status);
  const keyed = await controlRequest(admin, 'POST', `/_emulator/accounts/${account?.id ?? ''}/keys`, {});
  const key = (keyed.json as { key?: string } | undefined)?.key;
  ctx.expect(keyed.status === 201 && typeof key === 'string', 'the control API makes a key', null, 201, keyed.status);
  return { id: account?.id ?? '', key: key ?? '', secret: account?.webhook_secret ?? '' };
}

export const callbackScheduleChecks: Check[] = [
  {
    id: 'callbacks.retries.every-gap',
    group: 'callbacks',
    title: 'a callback failing every time is retried 5 times, 1 min, 5 min, 30 min, 2 h and 6 h after each failure, under one webhook-id, each attempt signed with its own timestamp',
    cost: 40,
    needs: ['admin', 'webhook'],
    async run(ctx) {
      const webhook = webhookOf(ctx);
      const failures = RETRY_DELAYS_SECONDS.length;
      // The receiver fails the first five deliveries and accepts the sixth, the last the reference allows.
      const url = failingAddress(webhook.url, failures, `gaps-${randomBytes(6).toString('hex')}`);
      const path = new URL(url).pathname;
      const mine = (): ReceivedCallback[] => webhook.received.filter((r) => r.path === path);
      const clock = timeline(ctx);
      const { submitted, task } = await submitCalledBack(ctx, ctx.api, url, scenario('instant'));
      await clock.advanceTo(1);
      let window: [number, number] = [0, 1];
      ctx.expect(await arrived(() => mine().length === 1), 'the first delivery arrives once the task ends', submitted, 1, mine().length);
      for (const [i, delay] of RETRY_DELAYS_SECONDS.entries()) {
        const [from, to] = window;
        const attempts = i + 1;
        await clock.advanceTo(from + delay - 1);
        await arrived(() => mine().length > attempts, QUIET_MS);
        ctx.expect(mine().length === attempts, `no retry before ${delay} s after failed delivery ${attempts}`, submitted, attempts, mine().length);
        await clock.advanceTo(to + delay + 1);
        window = [from + delay - 1, clock.now()];
        ctx.expect(await arrived(() => mine().length === attempts + 1), `retried ${delay} s after failed delivery ${attempts}`, submitted, attempts + 1, mine().length);
      }
      const got = mine();
      ctx.expect(got.map((d) => d.answered).join() === [...Array<number>(failures).fill(500), 200].join(), 'the receiver failed five deliveries and accepted the sixth', submitted, [...Array<number>(failures).fill(500), 200], got.map((d) => d.answered));
      const ids = got.map((d) => d.headers['webhook-id']);
      ctx.expect(ids.every((id) => id === ids[0]), 'every attempt carries the same webhook-id', submitted, ids[0], ids);
      const read = await ctx.api.request('GET', `/v1/tasks/${task.id}`);
      needAnswer(read);
      got.forEach((delivery, n) => expectCallbackDetails(ctx, submitted, delivery, body<TaskBody>(read), [webhook.secret], `delivery ${n + 1}`));
    },
  },
  {
    id: 'callbacks.rotation.two-signatures',
    group: 'callbacks',
    title: 'after a key rotation a callback carries two signatures, one by each secret, and after the 24 hours of overlap only the new one',
    cost: 80,
    needs: ['admin', 'webhook'],
    async run(ctx) {
      const webhook = webhookOf(ctx);
      const account = await ownAccount(ctx);
      // Its callbacks are another account's: not the suite's account's, so the rules over its history (judged
      // with its secret) do not see them.
      const { url, path, mine } = ownAddress(webhook, 'rotation');
      try {
        const rotated = await controlRequest(adminOf(ctx), 'POST', `/_emulator/accounts/${account.id}/webhook/rotate`);
        const secret = (rotated.json as { webhook_secret?: unknown } | undefined)?.webhook_secret;
        ctx.expect(rotated.status === 200 && typeof secret === 'string' && /^whsec_/.test(secret) && secret !== account.secret, 'the rotation gives a new whsec_ secret', null, 'a new secret', rotated.status);
        const current = String(secret);
        const client = createClient(ctx.api.baseUrl, account.key, ctx.contract);
        for (const [n, overlap] of [[1, true], [2, false]] as const) {
          if (!overlap) await ctx.wait(OVERLAP_SECONDS);
          const { submitted, task } = await submitCalledBack(ctx, client, url, scenario('instant'));
          const came = await waitUntil(ctx, () => mine().length >= n, 30);
          ctx.expect(came, `a callback for task ${task.id}`, submitted, n, mine().length);
          const got = await client.request('GET', `/v1/tasks/${task.id}`);
          needAnswer(got);
          const delivery = mine()[n - 1];
          if (!delivery) continue;
          const entries = (delivery.headers['webhook-signature'] ?? '').split(' ');
          const label = overlap ? 'during the overlap' : 'after the overlap';
          ctx.expect(entries.length === (overlap ? 2 : 1), `${label}: ${overlap ? 'two' : 'one'} webhook-signature entries`, submitted, overlap ? 2 : 1, delivery.headers['webhook-signature']);
          expectCallbackDetails(ctx, submitted, delivery, body<TaskBody>(got), overlap ? [current, account.secret] : [current], `the callback ${label}`);
          if (!overlap) ctx.expect(!signedWith(delivery, account.secret), `${label}: the replaced secret no longer signs`, submitted, 'no signature by the old secret', delivery.headers['webhook-signature']);
        }
      } finally {
        for (let i = webhook.received.length - 1; i >= 0; i -= 1) if (webhook.received[i]?.path === path) webhook.received.splice(i, 1);
      }
    },
  },
];
