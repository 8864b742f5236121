import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { NOTES, openWorld, REQUEST_ID, TEXT } from './world.ts';
import type { World } from './world.ts';

// Injected errors on /v1 (`kind: error`): the documented status and body of each endpoint group, as the official
// SDKs read them; X-Request-Id and Retry-After; the call record marked; nothing done (no task, no points frozen).
// And which requests a rule takes, and how a seeded probability repeats.

let w: World;
beforeAll(async () => {
  w = await openWorld();
});
afterAll(() => w.emulator.close());

const chat = { model: TEXT, messages: [{ role: 'user' as const, content: 'hello' }] };

it("lets the openai SDK's own retries succeed through two injected service_unavailable answers", async () => {
  const { id, key } = await w.newAccount();
  await w.faults([{ match: { method: 'POST', path: '/v1/chat/completions' }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2 }]);
  const client = new OpenAI({ apiKey: key, baseURL: `${w.base}/v1`, maxRetries: 2 });
  const { data, response } = await client.chat.completions.create(chat).withResponse();
  expect(response.status).toBe(200);
  expect(data.choices[0]?.message.content).toBeTruthy();
  expect((await w.admin<{ data: unknown[] }>('GET', '/_emulator/faults')).data).toMatchObject([{ id: 'fault_1', matched: 2, hits: 2 }]);

  const records = await w.records(key, '/v1/chat/completions');
  expect(records.map((r) => [r.status, r.error_code, r.injected_fault ?? null])).toEqual([
    [503, 'service_unavailable', { rule: 'fault_1', kind: 'error' }],
    [503, 'service_unavailable', { rule: 'fault_1', kind: 'error' }],
    [200, null, null],
  ]);
  expect(records[0]).toMatchObject({ account_id: id, model: TEXT, error_message: 'The model is temporarily unavailable.' });
  // Only the call that went through froze (and settled) points.
  const calls = new Set((await w.ledger(id)).flatMap((e) => (e.call_id ? [e.call_id] : [])));
  expect([...calls]).toEqual([records[2]?.request_id]);
});

it('gives the anthropic SDK an injected rate_limited in the Messages shape, with Retry-After and the request id', async () => {
  const { key } = await w.newAccount();
  await w.faults([{ match: { path: '/v1/messages' }, fault: { kind: 'error', code: 'rate_limited' }, times: 1 }]);
  const client = new Anthropic({ apiKey: key, baseURL: w.base, maxRetries: 0 });
  const failed = await client.messages.create({ model: TEXT, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  expect(failed).toBeInstanceOf(Anthropic.RateLimitError);
  const error = failed as InstanceType<typeof Anthropic.RateLimitError>;
  expect(error.status).toBe(429);
  expect(error.headers?.get('retry-after')).toBe('1');
  const requestId = error.headers?.get('x-request-id');
  expect(requestId).toMatch(REQUEST_ID);
  expect(error.requestID).toBe(requestId);
  expect(error.error).toEqual({ type: 'error', error: { type: 'rate_limited', code: 'rate_limited', message: expect.any(String), request_id: requestId } });
  expect(await w.record(requestId)).toMatchObject({ status: 429, error_code: 'rate_limited', injected_fault: { rule: 'fault_1', kind: 'error' } });
  // times: 1, so the next call is the service's own.
  expect((await client.messages.create({ model: TEXT, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })).type).toBe('message');
});

it('answers a task submission in the general shape with the rule’s Retry-After, and creates no task and freezes nothing', async () => {
  const { id, key } = await w.newAccount('500.000');
  await w.faults([{ match: { path: '/v1/tasks', method: 'post' }, fault: { kind: 'error', code: 'capacity_shortage', retry_after: 7 } }]);
  const before = await w.balances(id);
  const res = await w.api(key, 'POST', '/v1/tasks', NOTES, { 'Idempotency-Key': 'faulted-once' });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('7');
  const requestId = res.headers.get('x-request-id');
  expect(await res.json()).toEqual({ error: { code: 'capacity_shortage', message: expect.any(String), request_id: requestId } });
  expect(await w.tasks(id)).toEqual([]);
  expect(await w.balances(id)).toEqual(before);
  expect((await w.ledger(id)).map((e) => e.kind)).toEqual(['fund']);
  expect(await w.record(requestId)).toMatchObject({ status: 503, error_code: 'capacity_shortage', model: 'social-notes-data', injected_fault: { kind: 'error' } });

  // The idempotency key was not spent: once the rule is gone, the same submission creates its task.
  await w.faults([]);
  const accepted = await w.api(key, 'POST', '/v1/tasks', NOTES, { 'Idempotency-Key': 'faulted-once' });
  expect(accepted.status).toBe(200);
  expect(await w.tasks(id)).toHaveLength(1);
});

it('takes only the requests a rule names: by method, path prefix, model, key and account', async () => {
  const mine = await w.newAccount();
  const other = await w.newAccount();
  const error = { kind: 'error', code: 'internal_error' };
  await w.faults([
    { match: { key: mine.key, path: '/v1/tasks/*' }, fault: error },
    { match: { account: other.id, model: 'svc-text-pro' }, fault: { kind: 'error', code: 'permission_denied' } },
  ]);
  const statusOf = async (key: string, method: string, path: string, body?: unknown) => (await w.api(key, method, path, body)).status;
  expect(await statusOf(mine.key, 'GET', '/v1/tasks/T000000000000ABCDEF')).toBe(500);
  expect(await statusOf(mine.key, 'GET', '/v1/tasks')).toBe(200);
  expect(await statusOf(other.key, 'GET', '/v1/tasks/T000000000000ABCDEF')).toBe(404);
  expect(await statusOf(other.key, 'POST', '/v1/chat/completions', { ...chat, model: 'svc-text-pro' })).toBe(403);
  expect(await statusOf(other.key, 'POST', '/v1/chat/completions', chat)).toBe(200);
  expect(await statusOf(mine.key, 'POST', '/v1/chat/completions', { ...chat, model: 'svc-text-pro' })).toBe(200);
});

it('leaves requests alone that an earlier check refuses: a bad key is 401 whatever the rules say', async () => {
  await w.faults([{ fault: { kind: 'error', code: 'service_unavailable' } }]);
  expect((await w.api('sk-not-a-key', 'GET', '/v1/models')).status).toBe(401);
  expect((await w.admin<{ data: { matched: number }[] }>('GET', '/_emulator/faults')).data[0]?.matched).toBe(0);
});

it('injects the same sequence of faults on two emulators given the same seed and the same requests', async () => {
  const rule = { match: { path: '/v1/models' }, fault: { kind: 'error', code: 'internal_error' }, probability: 0.5 };
  const statuses = async (emulator: Emulator, seed?: string): Promise<string> => {
    emulator.control.faults.clear();
    emulator.control.faults.add({ rules: [rule] as never, ...(seed === undefined ? {} : { seed }) });
    const out: number[] = [];
    for (let i = 0; i < 24; i++) out.push((await request(emulator.app).get('/v1/models').set('Authorization', 'Bearer sk-emulator-demo')).status);
    return out.join(',');
  };
  const other = await createEmulator({ clock: 'manual', log: () => undefined, seed: 'run-1' });
  const third = await createEmulator({ clock: 'manual', log: () => undefined, seed: 'run-1' });
  try {
    const first = await statuses(w.emulator, 'qa-seed');
    expect(first).toContain('500');
    expect(first).toContain('200');
    expect(await statuses(other, 'qa-seed')).toBe(first);
    expect(await statuses(other, 'another-seed')).not.toBe(first);
    // Without a seed of its own, a batch draws one from the emulator's --seed: the same run, the same faults.
    expect(await statuses(third)).toBe(await statuses(other));
  } finally {
    await Promise.all([other.close(), third.close()]);
  }
});
