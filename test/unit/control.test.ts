import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

let emulator: Emulator;
beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', startTime: '2026-11-23T01:00:00Z', seed: 'control', log: () => undefined });
});
afterEach(() => emulator.close());

it('creates an account and a key and lists them without HTTP', async () => {
  const account = await emulator.control.accounts.create({ points: '50.000' });
  const key = emulator.control.keys.create(String(account['id']), { rpm: 5 });
  expect(key).toMatchObject({ object: 'key', account_id: account['id'], rpm: 5 });
  const page = emulator.control.accounts.list({ page: 1, limit: 1 });
  expect(page).toMatchObject({ object: 'list', page: 1, limit: 1, has_more: true });
  expect(page.versions).toHaveLength(1);
});

it('leaves out the rows whose version the caller already holds, and still lists every version', () => {
  const all = emulator.control.accounts.list();
  expect(all.limit).toBeNull();
  const again = emulator.control.accounts.list({ known: all.versions });
  expect(again.data).toEqual([]);
  expect(again.versions).toEqual(all.versions);
});

it('advances the manual clock and answers the time on the wire format', async () => {
  expect(await emulator.control.clock.advance(60)).toEqual({ now: '2026-11-23T09:01:00+08:00', mode: 'manual' });
  expect(emulator.control.health()).toMatchObject({ status: 'ok', clock: { now: '2026-11-23T09:01:00+08:00' } });
});

it('refuses a speed for a manual clock with invalid_params', () => {
  expect(() => emulator.control.clock.setSpeed(2)).toThrow(expect.objectContaining({ code: 'invalid_params' }));
});

it('answers not_found for a task, a call record or a callback message it does not hold', () => {
  expect(() => emulator.control.tasks.get('task_nope')).toThrow(expect.objectContaining({ code: 'not_found' }));
  expect(() => emulator.control.records.get('req_nope')).toThrow(expect.objectContaining({ code: 'not_found' }));
  expect(() => emulator.control.callbacks.get('msg_nope')).toThrow(expect.objectContaining({ code: 'not_found' }));
});

it('resets to the seed accounts and keys', async () => {
  await emulator.control.accounts.create();
  const { accounts } = emulator.control.reset();
  expect(emulator.control.accounts.list().data).toHaveLength(accounts);
  expect(emulator.control.state.export().accounts).toHaveLength(accounts);
});
