import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Exchange } from '../../wire/index.ts';
import { ajvText } from '../spec.ts';
import type { Check, CheckContext, ReceivedCallback } from '../types.ts';
import { CheckFailure } from '../client.ts';
import type { Client } from '../client.ts';
import { receiverRefused, refusedAsTheReferenceAllows } from './callbacks.ts';
import { body, needAnswer, notesInput, scenario } from './shared.ts';
import type { TaskBody } from './shared.ts';

// The callbacks of the ends the other callback checks never meet (failed, canceled), each held to every detail the
// reference gives of a callback request; the helpers serve the retry and rotation checks too.

/** "Callback timestamp tolerance": 5 minutes. */
const TOLERANCE_MS = 5 * 60 * 1000;
/** Real time a delivery the clock made due has to arrive, once the step that made it due is over. */
const ARRIVAL_MS = 5000;

type Webhook = NonNullable<CheckContext['webhook']>;

/** The receiver's callback address, for the checks that need it (`needs: ['webhook']`, so the suite gives it). */
export function webhookOf(ctx: CheckContext): Webhook {
  if (!ctx.webhook) throw new CheckFailure('no callback receiver', null);
  return ctx.webhook;
}

/** An address of one check's own under the receiver (its callbacks told apart by path), and what came to it. */
export function ownAddress(webhook: Webhook, name: string): { url: string; path: string; mine(): ReceivedCallback[] } {
  const url = `${webhook.url.endsWith('/') ? webhook.url : `${webhook.url}/`}${name}-${randomBytes(6).toString('hex')}`;
  const path = new URL(url).pathname;
  return { url, path, mine: () => webhook.received.filter((r) => r.path === path) };
}

/** Waits in real time until `ready()` (the sender may deliver just after the clock step that made it due). */
export async function arrived(ready: () => boolean, ms = ARRIVAL_MS): Promise<boolean> {
  for (const until = Date.now() + ms; !ready() && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  return ready();
}

/** Moves the deployment's time on a second at a time (real time without the control API) until `ready()`. */
export async function waitUntil(ctx: CheckContext, ready: () => boolean, seconds: number): Promise<boolean> {
  for (let waited = 0; !ready() && waited < seconds; waited += 1) {
    await ctx.wait(1);
    await arrived(ready, 50);
  }
  return arrived(ready, 500);
}

/** Submits a social-notes task called back at `url` as `client`; a refusal of the receiver's address is a skip. */
export async function submitCalledBack(ctx: CheckContext, client: Client, url: string, headers: Record<string, string> = {}): Promise<{ submitted: Exchange; task: TaskBody }> {
  const submitted = await client.request('POST', '/v1/tasks', { body: { ...notesInput(), webhook_url: url }, headers });
  if (refusedAsTheReferenceAllows(submitted, url)) throw receiverRefused(webhookOf(ctx).url);
  needAnswer(submitted);
  return { submitted, task: body<TaskBody>(submitted) };
}

/** The `v1,` entries of webhook-signature, decoded. */
const signatures = (header: string): Buffer[] => header.split(' ').filter((e) => e.startsWith('v1,')).map((e) => Buffer.from(e.slice(3), 'base64'));

/** The documented signature: HMAC-SHA256 keyed with the Base64 part of `whsec_…`, over `{id}.{timestamp}.{raw body}`. */
export function expectedSignature(secret: string, id: string, stamp: string, raw: string): Buffer {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return createHmac('sha256', key).update(`${id}.${stamp}.`, 'utf8').update(Buffer.from(raw, 'utf8')).digest();
}

/** Whether one entry of `header` is `secret`'s signature of the delivery, compared in constant time. */
export function signedWith(delivery: ReceivedCallback, secret: string): boolean {
  const expected = expectedSignature(secret, delivery.headers['webhook-id'] ?? '', delivery.headers['webhook-timestamp'] ?? '', delivery.raw);
  return signatures(delivery.headers['webhook-signature'] ?? '').some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
}

/**
 * Every detail of one callback request the reference gives: a JSON body (Content-Type application/json), User-Agent
 * Svc-Webhook/1.0, a msg_ webhook-id, webhook-timestamp in Unix seconds within 5 minutes of its arrival, a
 * webhook-signature of `v1,<Base64>` entries of which one is each of `secrets`' HMAC over the exact bytes received,
 * and an envelope typed after the task's terminal status whose data is the task object as GET shows it (`read`).
 * Failures name `submitted`, the request that asked for the callback.
 * @see reference "Events" Task callbacks
 */
export function expectCallbackDetails(ctx: CheckContext, submitted: Exchange, delivery: ReceivedCallback, read: TaskBody, secrets: readonly string[], label = 'the callback'): void {
  const h = delivery.headers;
  const type = (h['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  ctx.expect(type === 'application/json', `${label}: Content-Type application/json`, submitted, 'application/json', h['content-type']);
  ctx.expect(h['user-agent'] === 'Svc-Webhook/1.0', `${label}: User-Agent Svc-Webhook/1.0`, submitted, 'Svc-Webhook/1.0', h['user-agent']);
  ctx.expect(/^msg_\S+$/.test(h['webhook-id'] ?? ''), `${label}: webhook-id msg_…`, submitted, 'msg_…', h['webhook-id']);
  const stamp = h['webhook-timestamp'] ?? '';
  ctx.expect(/^\d{1,11}$/.test(stamp), `${label}: webhook-timestamp in Unix seconds`, submitted, 'Unix seconds', stamp);
  const wall = delivery.receivedWallMs;
  if (wall !== undefined) ctx.expect(Math.abs(Number(stamp) * 1000 - wall) <= TOLERANCE_MS, `${label}: webhook-timestamp is its send time, within 5 minutes of its arrival`, submitted, Math.floor(wall / 1000), stamp);
  const entries = (h['webhook-signature'] ?? '').split(' ');
  ctx.expect(entries.every((e) => /^v1,[A-Za-z0-9+/]+={0,2}$/.test(e)), `${label}: webhook-signature is v1,<Base64> entries separated by spaces`, submitted, 'v1,<Base64>', h['webhook-signature']);
  for (const [i, secret] of secrets.entries()) {
    const which = secrets.length > 1 ? ` (secret ${i + 1} of ${secrets.length})` : '';
    ctx.expect(signedWith(delivery, secret), `${label}: a v1 entry is the Base64 HMAC-SHA256 over {webhook-id}.{webhook-timestamp}.{the bytes received}${which}`, submitted, 'a valid signature', h['webhook-signature']);
  }
  let envelope: { type?: unknown; timestamp?: unknown; data?: unknown };
  try {
    envelope = JSON.parse(delivery.raw) as typeof envelope;
  } catch {
    throw new CheckFailure(`${label}: the body is JSON`, submitted, 'a JSON envelope', delivery.raw.slice(0, 200));
  }
  ctx.expect(envelope.type === `task.${read.status}`, `${label}: type follows the terminal status`, submitted, `task.${read.status}`, envelope.type);
  const schema = `Task${read.status.charAt(0).toUpperCase()}${read.status.slice(1)}Event`;
  const validate = ctx.contract.schema(schema);
  ctx.expect(validate(envelope), `${label}: the envelope is a ${schema}${validate.errors ? `: ${ajvText(validate)}` : ''}`, submitted, schema, envelope);
  ctx.expect(isDeepStrictEqual(envelope.data, read), `${label}: data is the task object itself, as GET shows it`, submitted, read, envelope.data);
}

/** One callback of a task that ends `status`, read once it came and held to every detail. */
async function expectEndCalledBack(ctx: CheckContext, status: 'failed' | 'canceled', end: (task: TaskBody) => Promise<void>, seconds: number, headers: Record<string, string> = {}): Promise<void> {
  const webhook = webhookOf(ctx);
  const { url, mine } = ownAddress(webhook, status);
  const { submitted, task } = await submitCalledBack(ctx, ctx.api, url, headers);
  await end(task);
  const came = await waitUntil(ctx, () => mine().length > 0, seconds);
  ctx.expect(came, `a callback for ${status} task ${task.id}`, submitted, 1, mine().length);
  const got = await ctx.api.request('GET', `/v1/tasks/${task.id}`);
  needAnswer(got);
  const read = body<TaskBody>(got);
  ctx.expect(read.status === status, `task ${task.id} is ${status}`, got, status, read.status);
  // One callback per task: a second would come at once (a retry only after a failed one, which this was not).
  await arrived(() => mine().length > 1, 250);
  ctx.expect(mine().length === 1, `exactly one callback for task ${task.id}`, submitted, 1, mine().length);
  const [delivery] = mine();
  if (delivery) expectCallbackDetails(ctx, submitted, delivery, read, [webhook.secret], `the ${status} callback`);
}

export const callbackDetailChecks: Check[] = [
  {
    id: 'callbacks.canceled.sent',
    group: 'callbacks',
    title: 'a canceled task is called back once: task.canceled, data the task object as GET shows it, JSON, User-Agent Svc-Webhook/1.0, signed over the bytes sent, timestamp in seconds',
    cost: 40,
    needs: ['webhook'],
    async run(ctx) {
      await expectEndCalledBack(
        ctx,
        'canceled',
        async (task) => {
          const canceled = await ctx.api.request('POST', `/v1/tasks/${task.id}/cancel`);
          needAnswer(canceled);
        },
        60,
      );
    },
  },
  {
    id: 'callbacks.failed.sent',
    group: 'callbacks',
    title: 'a failed task is called back once: task.failed, data the task object as GET shows it, JSON, User-Agent Svc-Webhook/1.0, signed over the bytes sent, timestamp in seconds',
    cost: 40,
    // Failed by the emulator's scenario (generation_failed after 47 s); a deployment without the control API ignores it.
    needs: ['admin', 'webhook'],
    async run(ctx) {
      await expectEndCalledBack(ctx, 'failed', () => ctx.wait(45), 60, scenario('generation_failed'));
    },
  },
];
