import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { stateOnDisk, stateOf } from '../support/state.ts';
import { socialNote, startEmulator } from '../support/harness.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-emulator-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it('keeps every acknowledged task, account, key and ledger entry across a restart', async () => {
  const db = join(dir, 'nested', 'store.db');
  const first = await startEmulator({ db });
  const account = await first.admin.post('/_emulator/accounts', { points: '500.000' });
  const key = (await first.admin.post(`/_emulator/accounts/${account.body.id}/keys`, {})).body.key as string;
  const task = await first.as(key).post('/v1/tasks', socialNote(), { 'Idempotency-Key': 'persist-me' });
  const demoTask = await first.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  await first.api.post(`/v1/tasks/${demoTask.body.id}/cancel`);
  const ledger = JSON.stringify(stateOf(first.emulator).ledger);
  // No close(): what was acknowledged must already be on disk.
  expect(stateOnDisk(db).tasks).toHaveLength(2);
  await first.close();

  const second = await startEmulator({ db });
  try {
    expect((await second.as(key).get(`/v1/tasks/${task.body.id}`)).body).toEqual(task.body);
    expect((await second.api.get(`/v1/tasks/${demoTask.body.id}`)).body.status).toBe('canceled');
    expect((await second.admin.get(`/_emulator/accounts/${account.body.id}`)).body).toMatchObject({
      available: '460.000',
      frozen: '40.000',
    });
    expect(JSON.stringify(stateOf(second.emulator).ledger)).toBe(ledger);
    const replay = await second.as(key).post('/v1/tasks', socialNote(), { 'Idempotency-Key': 'persist-me' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(task.body.id);
    // Seeding happens only on an empty store: the demo account keeps its history.
    expect((await second.admin.get('/_emulator/accounts/acct_demo')).body.available).toBe('100000.000');
  } finally {
    await second.close();
  }
});

it('resumes a manual clock where it stopped', async () => {
  const db = join(dir, 'store.db');
  const first = await startEmulator({ db, startTime: '2026-11-23T09:00:00+08:00' });
  await first.admin.post('/_emulator/clock/advance', { seconds: 7200 });
  await first.close();
  const second = await startEmulator({ db, startTime: '2026-11-23T09:00:00+08:00' });
  try {
    expect((await second.admin.get('/_emulator/clock')).body.now).toBe('2026-11-23T11:00:00+08:00');
  } finally {
    await second.close();
  }
});

it('has every acknowledged change on disk before it answers', async () => {
  const db = join(dir, 'store.db');
  const t = await startEmulator({ db });
  try {
    await Promise.all(Array.from({ length: 20 }, (_, i) => t.api.post('/v1/tasks', socialNote({ note: `n${i}` }))));
    const onDisk = stateOnDisk(db);
    expect(onDisk.tasks).toHaveLength(20);
    expect(onDisk.accounts.find((a) => a.id === 'acct_demo')?.frozen).toBe('800.000');
  } finally {
    await t.close();
  }
});
