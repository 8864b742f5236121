import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { answerAfter, hang, ioUntil, startBlackHole, startReceiver, trickleBody } from '../support/receiver.ts';
import type { Answer, Receiver } from '../support/receiver.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stateOnDisk } from '../support/state.ts';

// Receivers that hang, swallow connections or answer slowly never hold the clock: sends that fall due together go
// out together, an advance waits about one timeout per retry step, and nobody else's task or callback waits.
// The manual clock here; webhooks-real-clock.test.ts runs the same faults on the real clock.

const TIMEOUT_MS = 1500;
let t: TestEmulator;
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  await t.close();
  while (closers.length > 0) await closers.pop()?.();
});

async function receiver(answer: Answer): Promise<Receiver> {
  const r = await startReceiver(answer);
  closers.push(() => r.close());
  return r;
}

/** An account whose default callback address is `url`; returns its client, id and secret. */
async function accountCallingBack(url: string) {
  const created = await newAccount(t);
  const set = await t.admin.post(`/_emulator/accounts/${created.id}/webhook`, { url });
  return { ...created, api: t.as(created.key), secret: set.body.webhook_secret as string };
}

const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const deliveryOf = async (taskId: string) => (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${taskId}`)).body.data[0];
const submit = async (api: TestEmulator['api'], scenario: string): Promise<string> =>
  (await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': scenario })).body.id as string;

it('sends callbacks that fall due together at once: six hanging receivers cost one timeout, not six', async () => {
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: TIMEOUT_MS });
  const hanging = await receiver(hang);
  const owner = await accountCallingBack(hanging.url);
  const ids: string[] = [];
  for (let i = 0; i < 6; i += 1) ids.push(await submit(owner.api, 'instant'));
  await advance(0);
  expect(hanging.received).toHaveLength(6);
  const arrivals = hanging.received.map((r) => r.arrivedAt);
  // Every attempt reached its receiver before the first one was given up on.
  expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeLessThan(TIMEOUT_MS);
  for (const id of ids) {
    const delivery = await deliveryOf(id);
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ at: '2026-11-23T09:00:00+08:00', status_code: null, ok: false, error: `no answer within ${TIMEOUT_MS} ms` }),
    ]);
    expect(delivery).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:00+08:00' });
  }
});

it('answers a second advance while the first still waits for hanging receivers', async () => {
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: TIMEOUT_MS });
  const hanging = await receiver(hang);
  const owner = await accountCallingBack(hanging.url);
  for (let i = 0; i < 3; i += 1) await submit(owner.api, 'instant');
  const finished: string[] = [];
  const first = advance(0).then((res) => finished.push('first') && res);
  expect(await ioUntil(() => hanging.received.length === 3)).toBe(true);
  const second = await advance(30);
  finished.push('second');
  expect(second.body.now).toBe('2026-11-23T09:00:30+08:00');
  await first;
  expect(finished).toEqual(['second', 'first']);
});

it("delivers another account's callback and runs an unrelated task on its own time while receivers hang", async () => {
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: TIMEOUT_MS });
  const hanging = await receiver(hang);
  const healthy = await receiver((_n, res) => void res.writeHead(204).end());
  const stuck = await accountCallingBack(hanging.url);
  const other = await accountCallingBack(healthy.url);
  for (let i = 0; i < 3; i += 1) await submit(stuck.api, 'instant');
  // The default scenario: queued 1 s, then 8 s of processing.
  const unrelated = await submit(other.api, 'default');
  await advance(9);
  const task = (await other.api.get(`/v1/tasks/${unrelated}`)).body;
  expect(task).toMatchObject({ status: 'succeeded', started_at: '2026-11-23T09:00:01+08:00', finished_at: '2026-11-23T09:00:09+08:00' });
  expect(healthy.received).toHaveLength(1);
  expect(new Webhook(other.secret).verify(healthy.received[0]?.raw.toString() ?? '', headersOf(healthy.received[0]?.headers ?? {}))).toMatchObject({ data: task });
  // It reached its receiver while the hanging ones were still being waited for.
  const firstHang = Math.min(...hanging.received.map((r) => r.arrivedAt));
  expect((healthy.received[0]?.arrivedAt ?? Infinity) - firstHang).toBeLessThan(TIMEOUT_MS);
  expect((await deliveryOf(unrelated)).attempts).toEqual([expect.objectContaining({ at: '2026-11-23T09:00:09+08:00', status_code: 204, ok: true })]);
});

it('replays the whole 9-hour retry schedule over hanging receivers, each step sent together, each retry exact from its failure', async () => {
  const timeout = 400;
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: timeout });
  const hanging = await receiver(hang);
  const owner = await accountCallingBack(hanging.url);
  const ids = [await submit(owner.api, 'instant'), await submit(owner.api, 'instant')];
  await advance(9 * 3600);
  expect(hanging.received).toHaveLength(12);
  for (const id of ids) {
    const delivery = await deliveryOf(id);
    expect(delivery.attempts.map((a: { at: string }) => a.at)).toEqual([
      '2026-11-23T09:00:00+08:00',
      '2026-11-23T09:01:00+08:00',
      '2026-11-23T09:06:00+08:00',
      '2026-11-23T09:36:00+08:00',
      '2026-11-23T11:36:00+08:00',
      '2026-11-23T17:36:00+08:00',
    ]);
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null });
  }
  // The two messages' attempts of each step were in flight together.
  const byMessage = new Map<string, number[]>();
  for (const r of hanging.received) byMessage.set(String(r.headers['webhook-id']), [...(byMessage.get(String(r.headers['webhook-id'])) ?? []), r.arrivedAt]);
  const [a, b] = [...byMessage.values()] as [number[], number[]];
  for (let step = 0; step < 6; step += 1) expect(Math.abs((a[step] ?? 0) - (b[step] ?? Infinity))).toBeLessThan(timeout);
});

it.each([
  ['a receiver that never answers', 'hang'],
  ['a port that accepts the connection and never reads', 'black hole'],
  ['a 200 that comes after the timeout', 'slow status'],
])('counts %s as a failed attempt and retries it 1 min later', async (_what, kind) => {
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300 });
  let url: string;
  if (kind === 'black hole') {
    const hole = await startBlackHole();
    closers.push(() => hole.close());
    url = hole.url;
  } else {
    url = (await receiver(kind === 'hang' ? hang : answerAfter(900))).url;
  }
  const owner = await accountCallingBack(url);
  const id = await submit(owner.api, 'instant');
  await advance(0);
  const delivery = await deliveryOf(id);
  expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: null, ok: false, error: 'no answer within 300 ms' })]);
  expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(290);
  expect(delivery).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:00+08:00' });
});

it('counts a 2xx status line within the timeout as delivered, even when the body trickles in after it', async () => {
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300 });
  const slowBody = await receiver(trickleBody(900));
  const owner = await accountCallingBack(slowBody.url);
  const id = await submit(owner.api, 'instant');
  await advance(3600);
  const delivery = await deliveryOf(id);
  expect(slowBody.received).toHaveLength(1);
  expect(delivery).toMatchObject({ status: 'delivered', next_attempt_at: null });
  expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: 200, ok: true, error: null, response_excerpt: 'accepted;' })]);
});

it('keeps at most --webhook-concurrency sends in flight; the rest wait their turn and are all sent', async () => {
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, webhookConcurrency: 2 });
  let open = 0;
  let most = 0;
  const hanging = await receiver((_n, res) => {
    open += 1;
    most = Math.max(most, open);
    res.on('close', () => (open -= 1));
  });
  const owner = await accountCallingBack(hanging.url);
  const ids: string[] = [];
  for (let i = 0; i < 5; i += 1) ids.push(await submit(owner.api, 'instant'));
  await advance(0);
  expect(hanging.received).toHaveLength(5);
  expect(most).toBe(2);
  for (const id of ids) expect((await deliveryOf(id)).attempts).toEqual([expect.objectContaining({ at: '2026-11-23T09:00:00+08:00', ok: false })]);
});

it('logs one line per task transition and per callback attempt: failures at info, the rest at debug', async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', format: 'json', now: () => 0, write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, logger });
  const flaky = await receiver((n, res) => void res.writeHead(n === 0 ? 503 : 200).end());
  const owner = await accountCallingBack(flaky.url);
  const id = await submit(owner.api, 'instant');
  const failing = await submit(owner.api, 'no_result');
  await advance(120);
  const about = (taskId: string) => lines.filter((l) => l['task_id'] === taskId && l['message'] !== undefined);
  const of = (taskId: string) => about(taskId).map((l) => [l['level'], l['message'], l['to'] ?? l['status'] ?? l['error']]);
  expect(of(id)).toEqual([
    ['debug', 'task queued', undefined],
    ['debug', 'task processing', 'processing'],
    ['debug', 'task succeeded', 'succeeded'],
    ['info', 'callback task.succeeded failed', 503],
    ['debug', 'callback task.succeeded delivered', 200],
  ]);
  expect(of(failing)).toContainEqual(['info', 'task failed', 'failed']);
  const attempt = about(id).find((l) => l['message'] === 'callback task.succeeded failed');
  expect(attempt).toMatchObject({ account: owner.id, message_id: expect.stringMatching(/^msg_/), attempt: 1, kind: 'automatic', duration_ms: expect.any(Number) });
  expect(about(failing).find((l) => l['message'] === 'task failed')).toMatchObject({ account: owner.id, model: 'social-notes-data', from: 'processing', error_code: 'no_result' });
});

function headersOf(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
}

it('shuts down without making the sends still waiting for a slot: they stay due for the next start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-hanging-'));
  t = await startEmulator({ db: join(dir, 'store.db'), allowInsecureWebhooks: true, webhookTimeoutMs: 800, webhookConcurrency: 1 });
  const hanging = await receiver(hang);
  const owner = await accountCallingBack(hanging.url);
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) ids.push(await submit(owner.api, 'instant'));
  const advanced = advance(0);
  expect(await ioUntil(() => hanging.received.length === 1)).toBe(true);
  await t.close();
  await advanced;
  expect(hanging.received).toHaveLength(1);
  const messages = stateOnDisk(join(dir, 'store.db')).deliveries;
  await rm(dir, { recursive: true, force: true });
  expect(messages.map((m) => m.attempts.length).sort()).toEqual([0, 0, 1]);
  for (const m of messages) expect(m).toMatchObject({ status: 'pending', next_attempt_ms: expect.any(Number) });
});
