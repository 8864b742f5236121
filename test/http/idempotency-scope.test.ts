import Big from 'big.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';

// The Idempotency-Key is read on task submission only: anywhere else it neither replays an earlier answer nor
// conflicts with one, and no form of it is refused there.
// @see reference "Common request headers": Idempotency-Key (optional, POST /v1/tasks only)

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '100000.000');
  api = t.as(account.key);
});
afterEach(() => t.close());

const KEY = 'one-key-everywhere';
const withKey = (key = KEY): Record<string, string> => ({ 'Idempotency-Key': key });
const note = (n: string): Record<string, unknown> => ({ model: 'social-notes-data', input: { mode: 'note', note: n, agree: true } });
const uploadBody = (text: string): Record<string, unknown> => ({ filename: `${text}.txt`, content: Buffer.from(text).toString('base64') });
const charged = async (): Promise<string> => (await t.admin.get(`/_emulator/accounts/${account.id}`)).body.charged as string;

it('stores two uploads with one Idempotency-Key and different files as two files, neither a replay', async () => {
  const first = await api.post('/v1/files', uploadBody('first'), withKey());
  const second = await api.post('/v1/files', uploadBody('the second one'), withKey());
  for (const res of [first, second]) {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  }
  expect(second.body.id).not.toBe(first.body.id);
  expect(second.body).toMatchObject({ filename: 'the second one.txt', size: 14 });
});

it('stores the same upload sent twice with one Idempotency-Key twice, at two addresses', async () => {
  const first = await api.post('/v1/files', uploadBody('same'), withKey());
  const second = await api.post('/v1/files', uploadBody('same'), withKey());
  expect(second.status).toBe(200);
  expect(second.headers['idempotent-replayed']).toBeUndefined();
  expect(second.body.id).not.toBe(first.body.id);
  expect(second.body.url).not.toBe(first.body.url);
});

it('submits a task with a key an upload used before as a new task, and then replays it as usual', async () => {
  expect((await api.post('/v1/files', uploadBody('before'), withKey())).status).toBe(200);
  const task = await api.post('/v1/tasks', note('n1'), withKey());
  expect(task.status, JSON.stringify(task.body)).toBe(200);
  expect(task.headers['idempotent-replayed']).toBeUndefined();
  const again = await api.post('/v1/tasks', note('n1'), withKey());
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(task.body.id);
});

it('uploads with the key of an earlier task submission without a conflict or the task as answer', async () => {
  const task = await api.post('/v1/tasks', note('n1'), withKey());
  expect(task.status).toBe(200);
  const file = await api.post('/v1/files', uploadBody('after'), withKey());
  expect(file.status, JSON.stringify(file.body)).toBe(200);
  expect(file.headers['idempotent-replayed']).toBeUndefined();
  expect(file.body).toMatchObject({ object: 'file', filename: 'after.txt' });
});

it('cancels two tasks with one Idempotency-Key (the one their submission used), each answered with itself', async () => {
  const a = await api.post('/v1/tasks', note('a'), { ...withKey(), 'X-Emulator-Scenario': 'slow' });
  const b = await api.post('/v1/tasks', note('b'), { 'X-Emulator-Scenario': 'slow' });
  const cancelA = await api.post(`/v1/tasks/${a.body.id}/cancel`, undefined, withKey());
  const cancelB = await api.post(`/v1/tasks/${b.body.id}/cancel`, undefined, withKey());
  for (const [res, id] of [[cancelA, a.body.id], [cancelB, b.body.id]] as const) {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body).toMatchObject({ id, status: 'canceled' });
  }
  // Canceling again is refused as usual, not answered from the first cancel.
  const repeat = await api.post(`/v1/tasks/${a.body.id}/cancel`, undefined, withKey());
  expect(repeat.status).toBe(409);
  expect(repeat.body.error.code).toBe('task_not_cancelable');
});

it.each([
  ['/v1/chat/completions', (text: string) => ({ model: 'svc-text-lite', messages: [{ role: 'user', content: text }] })],
  ['/v1/responses', (text: string) => ({ model: 'svc-text-lite', input: text })],
  ['/v1/messages', (text: string) => ({ model: 'svc-text-lite', max_tokens: 64, messages: [{ role: 'user', content: text }] })],
])('answers and charges each %s call with one Idempotency-Key, different or the same', async (path, body) => {
  let before = await charged();
  const ids = new Set<string>();
  for (const text of ['Hello there', 'Something else entirely', 'Hello there']) {
    const res = await api.post(path, body(text), withKey());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    ids.add(res.body.id as string);
    const after = await charged();
    expect(new Big(after).gt(before), `${path}: charged ${before} → ${after}`).toBe(true);
    before = after;
  }
  expect(ids.size).toBe(3);
});

it.each([
  ['65 characters', 'k'.repeat(65)],
  ['an empty key', ''],
  ['a space inside', 'two words'],
])('ignores an Idempotency-Key task submission would refuse (%s) on an upload', async (_name, key) => {
  const refused = await api.post('/v1/tasks', note('n'), withKey(key));
  expect(refused.status).toBe(422);
  const res = await api.post('/v1/files', uploadBody('x'), withKey(key));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});
