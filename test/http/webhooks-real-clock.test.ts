import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { newAccount, socialNote, START, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { answerAfter, failFirst, hang, ioUntil, startBlackHole, startReceiver, trickleBody } from '../support/receiver.ts';
import type { Answer, Receiver } from '../support/receiver.ts';

// The real clock (the default of `npm start`) with receivers that hang. Wall time is vitest's fake time, so it
// moves only when the test moves it, and a callback's 10 s timeout is 10 s of that time: nothing sleeps. The
// sockets are real, so the test waits for their I/O with `ioUntil`.

const T0 = Date.parse(START);
let t: TestEmulator;
const receivers: Receiver[] = [];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(T0);
});

afterEach(async () => {
  // Receivers first: closing cuts the hanging sends, whose fake timeouts would otherwise never come.
  for (const r of receivers.splice(0)) await r.close();
  await t.close();
  vi.useRealTimers();
});

async function receiver(answer: Answer): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function accountCallingBack(url: string) {
  const created = await newAccount(t);
  await t.admin.post(`/_emulator/accounts/${created.id}/webhook`, { url });
  return { ...created, api: t.as(created.key) };
}

const submit = async (api: TestEmulator['api'], scenario: string): Promise<string> =>
  (await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': scenario })).body.id as string;
const stored = (id: string) => t.emulator.internals.db.tasks.get(id)?.task;
const messageOf = (taskId: string) => t.emulator.internals.db.deliveries.list({ taskId }, 1, 0).rows[0];
/** Moves the wall clock (and so the real virtual clock) forward second by second, running what falls due. */
const wallSeconds = async (seconds: number): Promise<void> => {
  for (let i = 0; i < seconds; i += 1) await vi.advanceTimersByTimeAsync(1000);
};

it('runs an unrelated task, its callback and a timeout on time while ten receivers hang, and retries 1 min after each failure', async () => {
  t = await startEmulator({ clock: 'real', allowInsecureWebhooks: true, webhookTimeoutMs: 10_000 });
  const hanging = await receiver(hang);
  const healthy = await receiver((_n, res) => void res.writeHead(200).end('ok'));
  const stuck = await accountCallingBack(hanging.url);
  const other = await accountCallingBack(healthy.url);
  const stuckIds: string[] = [];
  for (let i = 0; i < 10; i += 1) stuckIds.push(await submit(stuck.api, 'instant'));
  const unrelated = await submit(other.api, 'default'); // queued 1 s, then 8 s of processing
  const timingOut = await submit(other.api, 'timeout'); // never finishes: fails at 10 minutes
  await vi.advanceTimersByTimeAsync(0);
  expect(await ioUntil(() => hanging.received.length === 10)).toBe(true);

  await wallSeconds(1);
  expect(stored(unrelated)?.status).toBe('processing');
  await wallSeconds(8);
  expect(stored(unrelated)).toMatchObject({ status: 'succeeded', started_at: '2026-11-23T09:00:01+08:00', finished_at: '2026-11-23T09:00:09+08:00' });
  expect(await ioUntil(() => messageOf(unrelated)?.status === 'delivered')).toBe(true);
  expect(healthy.received).toHaveLength(1);
  expect(messageOf(unrelated)?.attempts).toEqual([expect.objectContaining({ at: '2026-11-23T09:00:09+08:00', status_code: 200 })]);
  // The hanging sends are still in flight: no outcome yet, nothing retried.
  for (const id of stuckIds) expect(messageOf(id)?.attempts).toEqual([]);

  await wallSeconds(1);
  expect(await ioUntil(() => stuckIds.every((id) => messageOf(id)?.attempts.length === 1))).toBe(true);
  for (const id of stuckIds) {
    expect(messageOf(id)?.attempts[0]).toMatchObject({ at: '2026-11-23T09:00:00+08:00', ok: false, error: 'no answer within 10000 ms' });
    // Failed at 09:00:10, so the first retry is due at 09:01:10.
    expect(messageOf(id)?.next_attempt_ms).toBe(T0 + 70_000);
  }
  await wallSeconds(59);
  expect(hanging.received).toHaveLength(10);
  await wallSeconds(1);
  expect(await ioUntil(() => hanging.received.length === 20)).toBe(true);

  await wallSeconds(600 - 70);
  expect(stored(timingOut)).toMatchObject({ status: 'failed', error: { code: 'timeout' }, finished_at: '2026-11-23T09:10:00+08:00' });
});

it('sends each retry at its own virtual time inside a jump of the real clock, not at the end of the jump', async () => {
  t = await startEmulator({ clock: 'real', allowInsecureWebhooks: true, webhookTimeoutMs: 10_000 });
  const flaky = await receiver(failFirst(2));
  const owner = await accountCallingBack(flaky.url);
  const id = await submit(owner.api, 'instant');
  await vi.advanceTimersByTimeAsync(0);
  expect(await ioUntil(() => messageOf(id)?.attempts.length === 1)).toBe(true);
  const jumped = await t.admin.post('/_emulator/clock/advance', { seconds: 3600 });
  expect(jumped.body.now).toBe('2026-11-23T10:00:00+08:00');
  expect(flaky.received).toHaveLength(3);
  expect(messageOf(id)).toMatchObject({ status: 'delivered', next_attempt_ms: null });
  expect(messageOf(id)?.attempts.map((a) => [a.at, a.status_code])).toEqual([
    ['2026-11-23T09:00:00+08:00', 500],
    ['2026-11-23T09:01:00+08:00', 500],
    ['2026-11-23T09:06:00+08:00', 200],
  ]);
});

it.each([
  ['a receiver that never answers', 'hang', null],
  ['a port that accepts the connection and never reads', 'black hole', null],
  ['a 200 that comes after the timeout', 'slow status', null],
  ['a 200 status line at once with a body that trickles past the timeout', 'slow body', 200],
] as const)('on the real clock, judges %s by the status line within 10 s', async (_what, kind, status) => {
  t = await startEmulator({ clock: 'real', allowInsecureWebhooks: true, webhookTimeoutMs: 10_000 });
  let url: string;
  if (kind === 'black hole') {
    const hole = await startBlackHole();
    receivers.push({ url: hole.url, received: [], close: hole.close });
    url = hole.url;
  } else {
    url = (await receiver(kind === 'hang' ? hang : kind === 'slow status' ? answerAfter(15_000) : trickleBody(15_000))).url;
  }
  const owner = await accountCallingBack(url);
  const id = await submit(owner.api, 'instant');
  await vi.advanceTimersByTimeAsync(0);
  if (kind !== 'black hole') expect(await ioUntil(() => receivers.at(-1)?.received.length === 1)).toBe(true);
  if (status === 200) {
    // The status line decided it; what of the body came by the deadline is kept as the excerpt.
    await wallSeconds(10);
    expect(await ioUntil(() => messageOf(id)?.status === 'delivered')).toBe(true);
    expect(messageOf(id)?.next_attempt_ms).toBeNull();
    expect(messageOf(id)?.attempts).toEqual([expect.objectContaining({ at: '2026-11-23T09:00:00+08:00', status_code: 200, ok: true, response_excerpt: 'accepted;' })]);
    return;
  }
  await wallSeconds(9);
  expect(messageOf(id)?.attempts).toEqual([]);
  await wallSeconds(1);
  expect(await ioUntil(() => messageOf(id)?.attempts.length === 1)).toBe(true);
  expect(messageOf(id)?.attempts[0]).toMatchObject({ at: '2026-11-23T09:00:00+08:00', status_code: null, ok: false, error: 'no answer within 10000 ms' });
  // Failed at 09:00:10: retried at 09:01:10.
  expect(messageOf(id)?.next_attempt_ms).toBe(T0 + 70_000);
});
