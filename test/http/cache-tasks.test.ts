import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// A task read by GET /v1/tasks/{id} comes from memory while the task is unchanged (src/tasks/records.ts: its
// row, and the answer's JSON made once per version). Each case warms the cache with a GET, changes the task in
// one of the ways the emulator can, and checks that the very next GET answers the change: a transition of the
// engine, a cancel, a control call, a write behind the repo's back, a reset, a state import, a rolled-back write.

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const submit = async (scenario = 'default'): Promise<string> => {
  const res = await t.api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': scenario });
  expect(res.status).toBe(200);
  return String(res.body.id);
};
const statusOf = async (id: string): Promise<string> => String((await t.api.get(`/v1/tasks/${id}`)).body.status ?? (await t.api.get(`/v1/tasks/${id}`)).body.error?.code);

it('answers each transition of the clock, a cancel and the control API on the very next GET', async () => {
  const id = await submit();
  expect(await statusOf(id)).toBe('queued');
  await t.admin.post('/_emulator/clock/advance', { seconds: 1 });
  expect(await statusOf(id)).toBe('processing');
  await t.admin.post('/_emulator/clock/advance', { seconds: 60 });
  expect(await statusOf(id)).toBe('succeeded');
  const other = await submit();
  expect(await statusOf(other)).toBe('queued');
  expect((await t.api.post(`/v1/tasks/${other}/cancel`, {})).status).toBe(200);
  expect(await statusOf(other)).toBe('canceled');
  const third = await submit();
  expect(await statusOf(third)).toBe('queued');
  expect((await t.admin.post(`/_emulator/tasks/${third}/fail`, { code: 'generation_failed' })).status).toBe(200);
  const failed = (await t.api.get(`/v1/tasks/${third}`)).body;
  expect(failed).toMatchObject({ status: 'failed', error: { code: 'generation_failed' } });
});

it('answers a write made behind the repository, a reset and a state import on the very next GET', async () => {
  const id = await submit();
  const exported = (await t.admin.post('/_emulator/state/export')).body as Record<string, unknown>;
  expect(await statusOf(id)).toBe('queued');
  const { store } = t.emulator.internals;
  store.transaction(() => store.driver.prepare('DELETE FROM tasks WHERE id = ?').run(id));
  expect((await t.api.get(`/v1/tasks/${id}`)).status).toBe(404);

  expect((await t.admin.post('/_emulator/state/import', exported)).status).toBe(200);
  expect(await statusOf(id)).toBe('queued');
  expect((await t.admin.post('/_emulator/reset')).status).toBe(200);
  expect((await t.api.get(`/v1/tasks/${id}`)).status).toBe(404);
});

it('forgets a change that was rolled back, even one read inside its own transaction', async () => {
  const id = await submit();
  expect(await statusOf(id)).toBe('queued');
  const { db, store } = t.emulator.internals;
  expect(() =>
    store.transaction(() => {
      const stored = db.tasks.get(id);
      if (!stored) throw new Error('no task');
      db.tasks.put({ ...stored, task: { ...stored.task, status: 'failed' } });
      expect(db.tasks.answer(id)?.stored.task.status).toBe('failed');
      throw new Error('roll back');
    }),
  ).toThrow('roll back');
  expect(db.tasks.get(id)?.task.status).toBe('queued');
  expect(await statusOf(id)).toBe('queued');
});

it('hands a read its own copy, and the answer of a GET to no one who could change it', async () => {
  const id = await submit();
  const { db } = t.emulator.internals;
  const copy = db.tasks.get(id);
  if (!copy) throw new Error('no task');
  copy.task.status = 'failed';
  expect(db.tasks.get(id)?.task.status).toBe('queued');
  const answer = db.tasks.answer(id);
  expect(Object.isFrozen(answer?.stored.task.points)).toBe(true);
  expect(JSON.parse(answer?.json ?? '')).toEqual((await t.api.get(`/v1/tasks/${id}`)).body);
  // Another account's task is not found, from memory or not.
  const other = await t.admin.post('/_emulator/accounts', { points: '100.000' });
  const key = await t.admin.post(`/_emulator/accounts/${other.body.id}/keys`, {});
  expect((await t.as(key.body.key).get(`/v1/tasks/${id}`)).status).toBe(404);
  expect((await t.as(DEMO_KEY).get(`/v1/tasks/${id}`)).status).toBe(200);
});
