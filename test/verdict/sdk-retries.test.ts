import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { socialNote } from '../support/harness.ts';
import { addFaults, checkOf, startWorld } from './world.ts';
import type { World } from './world.ts';

// The official openai SDK (6.x) as the client, through two injected `service_unavailable` answers: its own retries
// (exponential backoff with jitter) get the task through, and the verdict, read in-process, finds nothing to
// fault in how it got there, as long as the submit carries an Idempotency-Key. The SDK sends none of its own to
// this API (it has no idempotency header configured), so its retries of a submit are judged unsafe without one.

let world: World;
afterEach(() => world.close());

async function sdkSubmitThroughTwo503s(headers: Record<string, string>): Promise<{ key: string; id: string }> {
  const created = await world.t.admin.post(`/_emulator/accounts/${world.account.id}/keys`, {});
  const key = created.body.key as string;
  await addFaults(world, [{ match: { method: 'POST', path: '/v1/tasks', key }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2 }]);
  const client = new OpenAI({ apiKey: key, baseURL: `${world.base}/v1`, maxRetries: 2 });
  const task = await client.post<{ id: string; status: string }>('/tasks', { body: socialNote(), headers: { 'X-Emulator-Scenario': 'instant', ...headers } });
  expect(task.status).toBe('queued');
  const records = await world.t.admin.get(`/_emulator/records?key=${key}`);
  expect(records.body.data.map((r: { status: number }) => r.status)).toEqual([200, 503, 503]);
  return { key, id: task.id };
}

it("the openai SDK's own retries through two 503s, with an Idempotency-Key on the submit: a clean verdict for its key", async () => {
  world = await startWorld();
  const { key } = await sdkSubmitThroughTwo503s({ 'Idempotency-Key': `order-${randomUUID()}` });
  const verdict = world.t.emulator.verdict({ key });
  expect(checkOf(verdict, 'client.submit.idempotent-retry')?.status).toBe('pass');
  expect(checkOf(verdict, 'client.retries.back-off')?.status).toBe('pass');
  expect(verdict.checks.every((c) => c.status !== 'fail')).toBe(true);
  expect(verdict.ok).toBe(true);
});

it("the openai SDK's retries of a submit without an Idempotency-Key fail client.submit.idempotent-retry", async () => {
  world = await startWorld();
  const { key } = await sdkSubmitThroughTwo503s({});
  const verdict = world.t.emulator.verdict({ key });
  expect(checkOf(verdict, 'client.submit.idempotent-retry')).toMatchObject({ status: 'fail', reason: 'a submit retried after a 503 without an Idempotency-Key (and 1 more)' });
  expect(checkOf(verdict, 'client.retries.back-off')?.status).toBe('pass');
  expect(verdict.ok).toBe(false);
});
