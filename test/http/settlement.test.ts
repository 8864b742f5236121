import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { runTask, uploadFile } from '../support/tasks.ts';

// Settlement by each model's price rules, and the control API's task steps, which go through the same engine.

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '10000.000');
  api = t.as(account.key);
});
afterEach(() => t.close());

const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const balances = async () => (await t.admin.get(`/_emulator/accounts/${account.id}`)).body;
const ledgerOf = async (taskId: string) =>
  ((await t.admin.get(`/_emulator/accounts/${account.id}/ledger`)).body.data as { kind: string; points: string; task_id: string }[])
    .filter((e) => e.task_id === taskId)
    .map((e) => [e.kind, e.points]);
const upload = (filename: string, mimeType: string, extra: Record<string, unknown> = {}) => uploadFile(api, filename, mimeType, extra);
const run = (body: Record<string, unknown>, scenario = 'instant') => runTask(t, api, body, scenario);

it.each([
  ['480p', 4, '388.800'],
  ['720p', 5, '1188.000'],
  ['1080p', 15, '8812.500'],
])('video-gen-2.0-fast at %s for %i s charges duration × per-second price, all of the freeze', async (resolution, duration, points) => {
  const task = await run({ model: 'video-gen-2.0-fast', input: { prompt: 'p', resolution, duration } });
  expect(task.points).toEqual({ frozen: points, charged: points, refunded: '0.000' });
  expect(task.output.duration).toBe(duration);
  expect(await ledgerOf(task.id)).toEqual([
    ['freeze', points],
    ['charge', points],
  ]);
});

it('video-gen-2.0-fast with reference videos settles on output tokens and refunds the difference', async () => {
  await t.admin.post('/_emulator/scenarios', {
    scenarios: [{ name: 'tokens', queue_seconds: 0, processing_seconds: 0, outcome: 'succeeded', settle: { output_tokens: 100000 } }],
  });
  const video = await upload('ref.mp4', 'video/mp4', { duration: 6 });
  const task = await run({ model: 'video-gen-2.0-fast', input: { mode: 'video', prompt: 'p', videos: [video] } }, 'tokens');
  // 100,000 tokens at 6,400 points per million (720p) = 640.000; 1188.000 was frozen.
  expect(task.points).toEqual({ frozen: '1188.000', charged: '640.000', refunded: '548.000' });
  expect(task.output.usage).toEqual({ output_tokens: 100000 });
  expect(await ledgerOf(task.id)).toEqual([
    ['freeze', '1188.000'],
    ['charge', '640.000'],
    ['refund', '548.000'],
  ]);
  expect(await balances()).toMatchObject({ available: '9360.000', frozen: '0.000', charged: '640.000' });
});

it.each([
  ['fast', 12.2, '52.000'],
  ['standard', 12.2, '78.000'],
  ['max', 3, '24.000'],
])('avatar-photo (%s) charges the audio seconds rounded up (%f s → %s) and reports them as they are', async (quality, seconds, charged) => {
  const image = await upload('face.jpg', 'image/jpeg', { width: 800, height: 1000 });
  const audio = await upload('speech.mp3', 'audio/mpeg', { duration: seconds });
  const task = await run({ model: 'avatar-photo', input: { image, audio, quality } });
  const frozen = { fast: '40.000', standard: '60.000', max: '80.000' }[quality] as string;
  expect(task.points.frozen).toBe(frozen);
  expect(task.points.charged).toBe(charged);
  expect(task.points.refunded).toBe(Number(charged) < Number(frozen) ? (Number(frozen) - Number(charged)).toFixed(3) : '0.000');
  expect(task.output).toMatchObject({ duration: seconds, files: [{ type: 'video', width: 800, height: 1000, duration: seconds }] });
  expect((await balances()).frozen).toBe('0.000');
});

it('avatar-photo with drive text charges the finished video seconds', async () => {
  await t.admin.post('/_emulator/scenarios', {
    scenarios: [{ name: 'nine-seconds', queue_seconds: 0, processing_seconds: 0, outcome: 'succeeded', settle: { seconds: 8.4 } }],
  });
  const task = await run(
    {
      model: 'avatar-photo',
      input: { image: 'https://cdn.example.com/p.jpg', drive: 'text', content: 'Hello there', voice_audio: 'https://cdn.example.com/v.mp3' },
    },
    'nine-seconds',
  );
  // 8.4 s billed as 9 s × 6 (standard); the finished video's duration is reported as it is.
  expect(task.points).toEqual({ frozen: '60.000', charged: '54.000', refunded: '6.000' });
  expect(task.output.duration).toBe(8.4);
});

it('control: advance makes the next transition now, through the same engine as the clock', async () => {
  const { id } = (await api.post('/v1/tasks', { model: 'social-notes-data', input: { note: 'n', agree: true } }, {
    'X-Emulator-Scenario': 'slow',
  })).body;
  const started = await t.admin.post(`/_emulator/tasks/${id}/advance`);
  expect(started.body).toMatchObject({ status: 'processing', started_at: '2026-11-23T09:00:00+08:00' });
  await advance(5);
  const finished = await t.admin.post(`/_emulator/tasks/${id}/advance`);
  expect(finished.body).toMatchObject({ status: 'succeeded', finished_at: '2026-11-23T09:00:05+08:00' });
  expect(finished.body.points).toEqual({ frozen: '40.000', charged: '40.000', refunded: '0.000' });
  await advance(3600);
  expect((await api.get(`/v1/tasks/${id}`)).body).toEqual(finished.body);
  const again = await t.admin.post(`/_emulator/tasks/${id}/advance`);
  expect(again.status).toBe(409);
  expect(again.body.error.code).toBe('task_finished');
});

it('control: advance on a task that would never finish times it out now', async () => {
  const { id } = (await api.post('/v1/tasks', { model: 'social-notes-data', input: { note: 'n', agree: true } }, {
    'X-Emulator-Scenario': 'timeout',
  })).body;
  await t.admin.post(`/_emulator/tasks/${id}/advance`);
  const res = await t.admin.post(`/_emulator/tasks/${id}/advance`);
  expect(res.body).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
});

it('control: complete makes a queued task succeed now with the given output', async () => {
  const { id } = (await api.post('/v1/tasks', { model: 'social-notes-data', input: { note: 'n', agree: true } }, {
    'X-Emulator-Scenario': 'timeout-in-queue',
  })).body;
  const res = await t.admin.post(`/_emulator/tasks/${id}/complete`, { output: { text: '{"note_id":"abc"}' } });
  expect(res.body).toMatchObject({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:00+08:00',
    finished_at: '2026-11-23T09:00:00+08:00',
    output: { text: '{"note_id":"abc"}', files: [] },
    points: { frozen: '40.000', charged: '40.000', refunded: '0.000' },
  });
});

it('control: fail ends a task with the chosen code and a full refund; canceled is not a code to fail with', async () => {
  const { id } = (await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } })).body;
  const refused = await t.admin.post(`/_emulator/tasks/${id}/fail`, { code: 'canceled' });
  expect(refused.status).toBe(422);
  expect(refused.body.error.details[0].field).toBe('code');
  const res = await t.admin.post(`/_emulator/tasks/${id}/fail`, { code: 'capacity_shortage', message: 'busy' });
  expect(res.body).toMatchObject({
    status: 'failed',
    error: { code: 'capacity_shortage', message: 'busy' },
    points: { frozen: '1188.000', charged: '0.000', refunded: '1188.000' },
  });
  expect(await balances()).toMatchObject({ available: '10000.000', frozen: '0.000' });
  expect((await t.admin.post('/_emulator/tasks/T000000000000NOSUCH/fail', { code: 'no_result' })).status).toBe(404);
});

it('lists every account with its ledger: one entry per freeze, charge, refund and collect', async () => {
  await run({ model: 'social-notes-data', input: { note: 'n', agree: true } });
  const entries = (await t.admin.get(`/_emulator/accounts/${account.id}/ledger`)).body.data;
  expect(entries.map((e: { kind: string }) => e.kind)).toEqual(['fund', 'freeze', 'charge']);
  expect(entries[0]).toMatchObject({ account_id: account.id, points: '10000.000', task_id: null, at: '2026-11-23T09:00:00+08:00' });
});
