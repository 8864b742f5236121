import Big from 'big.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { runTask, uploadFile } from '../support/tasks.ts';

// A settlement beyond the freeze: the task's `frozen` stays what was frozen at submission, `charged` is the
// settlement, `refunded` is 0, and the shortfall (charged − frozen) is collected from available as a `collect`
// ledger entry of its own, even below zero. For every terminal task charged − collected + refunded = frozen;
// for every account funded = available + frozen + charged.
// @see reference "Task object" (points frozen, charged, refunded), "States and transitions" (succeeded),
// "Model: video-gen-2.0-fast" Rules (the freeze is an estimate, the difference refunded or collected afterward)

interface Entry {
  kind: string;
  points: string;
  task_id: string | null;
}

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
const open = async (points: string) => {
  account = await newAccount(t, points);
  api = t.as(account.key);
};
beforeEach(async () => {
  t = await startEmulator();
  await open('10000.000');
});
afterEach(() => t.close());

const balances = async () => (await t.admin.get(`/_emulator/accounts/${account.id}`)).body as { available: string; frozen: string; charged: string };
const ledger = async () => (await t.admin.get(`/_emulator/accounts/${account.id}/ledger`)).body.data as Entry[];
const ledgerOf = async (taskId: string) => (await ledger()).filter((e) => e.task_id === taskId).map((e) => [e.kind, e.points]);
const upload = (filename: string, mimeType: string, extra: Record<string, unknown> = {}) => uploadFile(api, filename, mimeType, extra);
const run = (body: Record<string, unknown>, scenario = 'instant') => runTask(t, api, body, scenario);
const sumOf = (entries: Entry[], kind: string, taskId?: string): Big =>
  entries.filter((e) => e.kind === kind && (taskId === undefined || e.task_id === taskId)).reduce((s, e) => s.plus(e.points), new Big(0));

/** The account's balances against its ledger, and a settled task's points against its own entries. */
async function expectInvariants(task: { id: string; points: { frozen: string; charged: string; refunded: string } }): Promise<void> {
  const [view, entries] = await Promise.all([balances(), ledger()]);
  const s = (kind: string) => sumOf(entries, kind);
  expect(new Big(view.available).plus(view.frozen).plus(view.charged).eq(s('fund'))).toBe(true);
  expect(s('fund').minus(s('freeze')).plus(s('refund')).minus(s('collect')).eq(view.available)).toBe(true);
  expect(s('freeze').minus(s('charge')).minus(s('refund')).eq(view.frozen)).toBe(true);
  expect(s('charge').plus(s('collect')).eq(view.charged)).toBe(true);
  const own = (kind: string) => sumOf(entries, kind, task.id);
  const { frozen, charged, refunded } = task.points;
  expect(own('freeze').eq(frozen)).toBe(true);
  expect(own('charge').plus(own('collect')).eq(charged)).toBe(true);
  expect(own('refund').eq(refunded)).toBe(true);
  expect(new Big(charged).minus(own('collect')).plus(refunded).eq(frozen)).toBe(true);
}

it('video-gen-2.0-fast with reference videos keeps frozen as frozen and collects the tokens beyond it', async () => {
  const video = await upload('ref.mp4', 'video/mp4', { duration: 10 });
  const submitted = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { mode: 'video', prompt: 'p', videos: [video], resolution: '480p' } }, {
    'X-Emulator-Scenario': 'instant',
  });
  expect(submitted.body.points).toEqual({ frozen: '486.000', charged: '0.000', refunded: '0.000' });
  await t.admin.post('/_emulator/clock/advance', { seconds: 0 });
  const task = (await api.get(`/v1/tasks/${submitted.body.id}`)).body;
  // (5 s + 10 s of reference ÷ 10) × (97.2 ÷ 6000 × 1,000,000 tokens per second) = 97200 tokens = 583.200 points.
  expect(task.output.usage).toEqual({ output_tokens: 97200 });
  expect(task.points).toEqual({ frozen: '486.000', charged: '583.200', refunded: '0.000' });
  expect(await ledgerOf(task.id)).toEqual([
    ['freeze', '486.000'],
    ['charge', '486.000'],
    ['collect', '97.200'],
  ]);
  expect(await balances()).toMatchObject({ available: '9416.800', frozen: '0.000', charged: '583.200' });
  await expectInvariants(task);
  // The list and the control API show the same points.
  expect((await api.get('/v1/tasks')).body.data[0].points).toEqual(task.points);
  const listed = (await t.admin.get(`/_emulator/tasks?account=${account.id}`)).body.data[0];
  expect(listed.task.points).toEqual(task.points);
});

it('a scenario settle beyond the freeze collects the shortfall even below zero; nothing more can be frozen', async () => {
  await t.admin.post('/_emulator/scenarios', {
    scenarios: [{ name: 'costly', queue_seconds: 0, processing_seconds: 0, outcome: 'succeeded', settle: { output_tokens: 100000 } }],
  });
  await open('500.000');
  const task = await run(
    { model: 'video-gen-2.0-fast', input: { mode: 'video', prompt: 'p', videos: ['https://cdn.example.com/r.mp4'], resolution: '480p', duration: 4 } },
    'costly',
  );
  // 100,000 tokens at 6,000 points per million (480p) = 600.000; 4 s × 97.2 = 388.800 was frozen.
  expect(task.points).toEqual({ frozen: '388.800', charged: '600.000', refunded: '0.000' });
  expect(await ledgerOf(task.id)).toEqual([
    ['freeze', '388.800'],
    ['charge', '388.800'],
    ['collect', '211.200'],
  ]);
  expect(await balances()).toMatchObject({ available: '-100.000', frozen: '0.000', charged: '600.000' });
  await expectInvariants(task);
  const refused = await api.post('/v1/tasks', { model: 'social-notes-data', input: { note: 'n', agree: true } });
  expect(refused.status).toBe(402);
  expect(refused.body.error.code).toBe('insufficient_points');
});

it('avatar-photo with audio longer than the estimate collects the seconds beyond it', async () => {
  const audio = await upload('speech.mp3', 'audio/mpeg', { duration: 12.2 });
  const task = await run({ model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio } });
  // 13 s × 6 (standard) = 78.000; 10 s × 6 = 60.000 was frozen.
  expect(task.points).toEqual({ frozen: '60.000', charged: '78.000', refunded: '0.000' });
  expect(await ledgerOf(task.id)).toEqual([
    ['freeze', '60.000'],
    ['charge', '60.000'],
    ['collect', '18.000'],
  ]);
  await expectInvariants(task);
});
