import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator;
const STAYS_QUEUED = { 'X-Emulator-Scenario': 'timeout-in-queue' };
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

async function submitMany(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.api.post('/v1/tasks', socialNote({ note: `n${i}` }));
    ids.push(res.body.id as string);
  }
  return ids;
}

it('reads back a task exactly as submitted', async () => {
  const created = await t.api.post('/v1/tasks', socialNote());
  const got = await t.api.get(`/v1/tasks/${created.body.id}`);
  expect(got.status).toBe(200);
  expect(got.body).toEqual(created.body);
});

it('answers 404 not_found for an unknown task id', async () => {
  const res = await t.api.get('/v1/tasks/T261123090000ZZZZZZ');
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
});

it("hides another account's tasks: get and cancel give 404, the list leaves them out", async () => {
  const other = await newAccount(t);
  const theirs = await t.as(other.key).post('/v1/tasks', socialNote());
  expect((await t.api.get(`/v1/tasks/${theirs.body.id}`)).status).toBe(404);
  const cancel = await t.api.post(`/v1/tasks/${theirs.body.id}/cancel`);
  expect(cancel.status).toBe(404);
  expect(cancel.body.error.code).toBe('not_found');
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
  expect((await t.as(other.key).get(`/v1/tasks/${theirs.body.id}`)).body.status).toBe('queued');
});

it('lists newest first with the default page size of 20', async () => {
  const ids = await submitMany(23);
  const page1 = await t.api.get('/v1/tasks');
  expect(page1.body).toMatchObject({ object: 'list', page: 1, limit: 20, has_more: true });
  expect(page1.body.data.map((task: { id: string }) => task.id)).toEqual(ids.slice().reverse().slice(0, 20));
  const page2 = await t.api.get('/v1/tasks?page=2');
  expect(page2.body).toMatchObject({ page: 2, limit: 20, has_more: false });
  expect(page2.body.data.map((task: { id: string }) => task.id)).toEqual(ids.slice(0, 3).reverse());
});

it('pages with a limit, has_more false exactly on the last full page', async () => {
  await submitMany(6);
  const seen: string[] = [];
  for (let page = 1; page <= 3; page++) {
    const res = await t.api.get(`/v1/tasks?limit=2&page=${page}`);
    expect(res.body.has_more).toBe(page < 3);
    seen.push(...res.body.data.map((task: { id: string }) => task.id));
  }
  expect(new Set(seen).size).toBe(6);
  expect((await t.api.get('/v1/tasks?limit=2&page=4')).body).toMatchObject({ data: [], has_more: false });
});

it('accepts limit 100 and refuses limit 101, limit 0 and page 0 with invalid_params', async () => {
  expect((await t.api.get('/v1/tasks?limit=100')).status).toBe(200);
  for (const query of ['limit=101', 'limit=0', 'page=0', 'limit=ten', 'status=done']) {
    const res = await t.api.get(`/v1/tasks?${query}`);
    expect(res.status, query).toBe(422);
    expect(res.body.error.code).toBe('invalid_params');
    expect(res.body.error.details[0].field).toBe(query.split('=')[0]);
  }
});

it('filters by status and by model', async () => {
  const [a, b] = await submitMany(2);
  const video = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  await t.api.post(`/v1/tasks/${a}/cancel`);
  const canceled = await t.api.get('/v1/tasks?status=canceled');
  expect(canceled.body.data.map((task: { id: string }) => task.id)).toEqual([a]);
  const queuedNotes = await t.api.get('/v1/tasks?status=queued&model=social-notes-data');
  expect(queuedNotes.body.data.map((task: { id: string }) => task.id)).toEqual([b]);
  const videos = await t.api.get('/v1/tasks?model=video-gen-2.0-fast');
  expect(videos.body.data.map((task: { id: string }) => task.id)).toEqual([video.body.id]);
});

it('cancels a queued task with a full refund and error.code canceled', async () => {
  const task = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } }, STAYS_QUEUED);
  await t.admin.post('/_emulator/clock/advance', { seconds: 30 });
  const res = await t.api.post(`/v1/tasks/${task.body.id}/cancel`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    id: task.body.id,
    status: 'canceled',
    finished_at: '2026-11-23T09:00:30+08:00',
    points: { frozen: '1188.000', charged: '0.000', refunded: '1188.000' },
    output: null,
    error: { code: 'canceled' },
  });
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body).toMatchObject({
    available: '100000.000',
    frozen: '0.000',
  });
  expect((await t.api.get(`/v1/tasks/${task.body.id}`)).body).toEqual(res.body);
});

it('answers 409 task_not_cancelable for a task already canceled, refunding nothing twice', async () => {
  const task = await t.api.post('/v1/tasks', socialNote());
  await t.api.post(`/v1/tasks/${task.body.id}/cancel`);
  const again = await t.api.post(`/v1/tasks/${task.body.id}/cancel`);
  expect(again.status).toBe(409);
  expect(again.body.error.code).toBe('task_not_cancelable');
  expect(again.body.error.message).toMatch(/canceled/);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body.available).toBe('100000.000');
});
