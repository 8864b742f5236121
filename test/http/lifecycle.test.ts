import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';

// Every row of the reference's transition table, on the manual clock: the task object, its points and the
// account's ledger after each step. Times start at 09:00:00 Beijing time.

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '1000.000');
  api = t.as(account.key);
});
afterEach(() => t.close());

const at = (hh: number, mm: number, ss: number): string =>
  `2026-11-23T${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}+08:00`;
const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const task = async (id: string) => (await api.get(`/v1/tasks/${id}`)).body;
const balances = async () => (await t.admin.get(`/_emulator/accounts/${account.id}`)).body;
const ledger = async () =>
  ((await t.admin.get(`/_emulator/accounts/${account.id}/ledger`)).body.data as { kind: string; points: string; task_id: string }[])
    .filter((e) => e.kind !== 'fund')
    .map((e) => [e.kind, e.points]);

const submit = (scenario: string, body: Record<string, unknown> = socialNote()) =>
  api.post('/v1/tasks', body, { 'X-Emulator-Scenario': scenario });

it('(none) → queued: points frozen, nothing started', async () => {
  const res = await submit('default');
  expect(res.body).toMatchObject({
    status: 'queued',
    created_at: at(9, 0, 0),
    started_at: null,
    finished_at: null,
    output: null,
    error: null,
    points: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
  });
  expect(await balances()).toMatchObject({ available: '960.000', frozen: '40.000', charged: '0.000' });
  expect(await ledger()).toEqual([['freeze', '40.000']]);
});

it('queued → processing → succeeded on the scenario times, charging the fixed price', async () => {
  const { id } = (await submit('default')).body;
  await advance(1);
  expect(await task(id)).toMatchObject({ status: 'processing', started_at: at(9, 0, 1), finished_at: null, output: null });
  await advance(7);
  expect((await task(id)).status).toBe('processing');
  await advance(1);
  const done = await task(id);
  expect(done).toMatchObject({
    status: 'succeeded',
    started_at: at(9, 0, 1),
    finished_at: at(9, 0, 9),
    error: null,
    points: { frozen: '40.000', charged: '40.000', refunded: '0.000' },
    output: { files: [] },
  });
  expect(JSON.parse(done.output.text)).toHaveProperty('note_id');
  expect(await balances()).toMatchObject({ available: '960.000', frozen: '0.000', charged: '40.000' });
  expect(await ledger()).toEqual([
    ['freeze', '40.000'],
    ['charge', '40.000'],
  ]);
});

it('applies every due transition at its own time when one advance passes them all', async () => {
  const first = (await submit('default')).body.id;
  await advance(3);
  const second = (await submit('default')).body.id;
  await advance(3600);
  expect(await task(first)).toMatchObject({ started_at: at(9, 0, 1), finished_at: at(9, 0, 9) });
  expect(await task(second)).toMatchObject({ started_at: at(9, 0, 4), finished_at: at(9, 0, 12) });
});

it.each([
  ['invalid_params', 1, 6],
  ['content_rejected', 2, 62],
  ['generation_failed', 2, 47],
  ['no_result', 1, 5],
])('processing → failed with %s: full refund, error set, no output', async (code, startSecond, endSecond) => {
  const { id } = (await submit(code)).body;
  await advance(3600);
  const failed = await task(id);
  expect(failed).toMatchObject({
    status: 'failed',
    started_at: at(9, 0, startSecond),
    finished_at: at(9, Math.floor(endSecond / 60), endSecond % 60),
    output: null,
    error: { code, message: expect.any(String) },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  });
  expect(await balances()).toMatchObject({ available: '1000.000', frozen: '0.000', charged: '0.000' });
  expect(await ledger()).toEqual([
    ['freeze', '40.000'],
    ['refund', '40.000'],
  ]);
});

it.each([
  ['insufficient_points', at(9, 0, 1)],
  ['service_unavailable', at(9, 0, 3)],
  ['capacity_shortage', at(9, 5, 0)],
])('queued → failed with %s without ever starting: full refund', async (code, finishedAt) => {
  const { id } = (await submit(code)).body;
  await advance(3600);
  expect(await task(id)).toMatchObject({
    status: 'failed',
    started_at: null,
    finished_at: finishedAt,
    error: { code },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  });
  expect(await ledger()).toEqual([
    ['freeze', '40.000'],
    ['refund', '40.000'],
  ]);
});

it('processing → failed with timeout at the maximum processing time: 10 minutes for social-notes-data', async () => {
  const { id } = (await submit('timeout')).body;
  await advance(599);
  expect((await task(id)).status).toBe('processing');
  await advance(1);
  expect(await task(id)).toMatchObject({
    status: 'failed',
    started_at: at(9, 0, 2),
    finished_at: at(9, 10, 0),
    error: { code: 'timeout' },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  });
  expect(await balances()).toMatchObject({ available: '1000.000', frozen: '0.000' });
});

it('queued → failed with timeout at 60 minutes for a video that never leaves the queue', async () => {
  const rich = await newAccount(t, '5000.000');
  const { id } = (await t.as(rich.key).post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } }, {
    'X-Emulator-Scenario': 'timeout-in-queue',
  })).body;
  await advance(3599);
  expect((await t.as(rich.key).get(`/v1/tasks/${id}`)).body.status).toBe('queued');
  await advance(1);
  expect((await t.as(rich.key).get(`/v1/tasks/${id}`)).body).toMatchObject({
    status: 'failed',
    started_at: null,
    finished_at: at(10, 0, 0),
    error: { code: 'timeout' },
    points: { frozen: '1188.000', charged: '0.000', refunded: '1188.000' },
  });
  expect((await t.admin.get(`/_emulator/accounts/${rich.id}`)).body).toMatchObject({ available: '5000.000', frozen: '0.000' });
});

it('times out a slow task that would have finished after the limit, at the limit', async () => {
  await t.admin.post('/_emulator/scenarios', {
    scenarios: [{ name: 'too-slow', queue_seconds: 60, processing_seconds: 3600, outcome: 'succeeded' }],
  });
  const { id } = (await submit('too-slow')).body;
  await advance(7200);
  expect(await task(id)).toMatchObject({ status: 'failed', started_at: at(9, 1, 0), finished_at: at(9, 10, 0), error: { code: 'timeout' } });
});

it('queued → canceled by cancel: full refund, error.code canceled', async () => {
  const { id } = (await submit('timeout-in-queue')).body;
  await advance(30);
  const canceled = (await api.post(`/v1/tasks/${id}/cancel`)).body;
  expect(canceled).toMatchObject({
    status: 'canceled',
    started_at: null,
    finished_at: at(9, 0, 30),
    error: { code: 'canceled' },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  });
  await advance(3600);
  expect(await task(id)).toEqual(canceled);
  expect(await ledger()).toEqual([
    ['freeze', '40.000'],
    ['refund', '40.000'],
  ]);
});

it('processing → cancel refused with 409 task_not_cancelable for most started tasks, which then go on', async () => {
  const { id } = (await submit('default')).body;
  await advance(2);
  const res = await api.post(`/v1/tasks/${id}/cancel`);
  expect(res.status).toBe(409);
  expect(res.body.error).toMatchObject({ code: 'task_not_cancelable', message: expect.stringContaining('started') });
  await advance(60);
  expect((await task(id)).status).toBe('succeeded');
});

it('processing → canceled when the scenario makes the started task cancelable: full refund', async () => {
  const { id } = (await submit('cancelable')).body;
  await advance(60);
  expect((await task(id)).status).toBe('processing');
  const canceled = (await api.post(`/v1/tasks/${id}/cancel`)).body;
  expect(canceled).toMatchObject({
    status: 'canceled',
    started_at: at(9, 0, 5),
    finished_at: at(9, 1, 0),
    error: { code: 'canceled' },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  });
  await advance(3600);
  expect((await task(id)).status).toBe('canceled');
  expect(await balances()).toMatchObject({ available: '1000.000', frozen: '0.000', charged: '0.000' });
});

it.each(['succeeded', 'failed', 'canceled'])('%s → cancel: 409 task_not_cancelable, unchanged', async (status) => {
  const scenario = { succeeded: 'instant', failed: 'no_result', canceled: 'timeout-in-queue' }[status] ?? '';
  const { id } = (await submit(scenario)).body;
  if (status === 'canceled') await api.post(`/v1/tasks/${id}/cancel`);
  await advance(60);
  const before = await task(id);
  expect(before.status).toBe(status);
  const ledgerBefore = await ledger();
  const res = await api.post(`/v1/tasks/${id}/cancel`);
  expect(res.status).toBe(409);
  expect(res.body.error).toMatchObject({ code: 'task_not_cancelable', message: expect.stringContaining(status) });
  expect(await task(id)).toEqual(before);
  expect(await ledger()).toEqual(ledgerBefore);
});

it('keeps the task and its schedule across a restart of a file-backed emulator', async () => {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = await mkdtemp(join(tmpdir(), 'svc-lifecycle-'));
  try {
    const first = await startEmulator({ db: join(dir, 'db.json') });
    const { id } = (await first.api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'default' })).body;
    await first.admin.post('/_emulator/clock/advance', { seconds: 2 });
    await first.close();
    const second = await startEmulator({ db: join(dir, 'db.json') });
    try {
      expect((await second.api.get(`/v1/tasks/${id}`)).body.status).toBe('processing');
      await second.admin.post('/_emulator/clock/advance', { seconds: 60 });
      expect((await second.api.get(`/v1/tasks/${id}`)).body).toMatchObject({ status: 'succeeded', finished_at: at(9, 0, 9) });
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
