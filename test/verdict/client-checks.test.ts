import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { socialNote } from '../support/harness.ts';
import { addFaults, advance, call, checkOf, clean, realWait, startWorld, verdictOf } from './world.ts';
import type { Answered, World } from './world.ts';

// Each client check of the verdict, end to end: a client sends real HTTP to a started emulator, the emulator's
// own limits (a key's requests per minute) or injected faults give it something to cope with, and the verdict of
// `GET /_emulator/verdict?key=` says whether it coped. A careless client fails the check; a careful one passes it
// and fails no other. The waits are the client's own, in real time: that is the time a verdict judges.

let world: World;
afterEach(() => world.close());

const newKey = async (settings: Record<string, unknown> = {}): Promise<string> => {
  const res = await world.t.admin.post(`/_emulator/accounts/${world.account.id}/keys`, settings);
  expect(res.status).toBe(201);
  return res.body.key as string;
};
const submit = (key: string, headers: Record<string, string> = {}, body = socialNote()) =>
  call(world, 'POST', '/v1/tasks', { key, body, headers: { 'X-Emulator-Scenario': 'instant', ...headers } });
const ids = (...answers: Answered[]) => answers.map((a) => a.requestId);

/** A key allowed one request a minute, 59 virtual seconds after its one request: the next is 429, Retry-After 1. */
async function rateLimited(): Promise<{ key: string; refused: Answered }> {
  const key = await newKey({ rpm: 1 });
  expect((await call(world, 'GET', '/v1/models', { key })).status).toBe(200);
  await advance(world, 59);
  const refused = await call(world, 'GET', '/v1/models', { key });
  expect([refused.status, refused.retryAfter]).toEqual([429, '1']);
  return { key, refused };
}

it('client.retry-after.respected: fails a client that asks again at once after a 429 with Retry-After', async () => {
  world = await startWorld();
  const { key, refused } = await rateLimited();
  const again = await call(world, 'GET', '/v1/models', { key });
  expect(again.status).toBe(429);
  const check = checkOf(await verdictOf(world, { key }), 'client.retry-after.respected');
  expect(check?.status).toBe('fail');
  expect(check?.reason).toMatch(/within Retry-After: GET \/v1\/models/);
  expect(check?.evidence).toEqual(expect.arrayContaining(ids(refused, again)));
});

it('client.retry-after.respected: passes a client that waits the seconds Retry-After says', async () => {
  world = await startWorld();
  const { key } = await rateLimited();
  await realWait(1000);
  // The emulator's clock is manual: the minute the limit counts moves only when the test moves it.
  await advance(world, 1);
  expect((await call(world, 'GET', '/v1/models', { key })).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.retry-after.respected')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.submit.idempotent-retry: fails a client that sends a submit again after a reset without an Idempotency-Key', async () => {
  world = await startWorld();
  const key = await newKey();
  await addFaults(world, [{ match: { method: 'POST', path: '/v1/tasks', key }, fault: { kind: 'reset' }, times: 1 }]);
  expect((await submit(key)).status).toBe('reset');
  await realWait(300);
  expect((await submit(key)).status).toBe(200);
  const check = checkOf(await verdictOf(world, { key }), 'client.submit.idempotent-retry');
  expect(check).toMatchObject({ status: 'fail', reason: 'a submit retried after a reset without an Idempotency-Key' });
  expect(check?.evidence).toHaveLength(2);
});

it('client.submit.idempotent-retry: passes a client that retries a reset submit under the same Idempotency-Key', async () => {
  world = await startWorld();
  const key = await newKey();
  await addFaults(world, [{ match: { method: 'POST', path: '/v1/tasks', key }, fault: { kind: 'reset' }, times: 1 }]);
  const order = { 'Idempotency-Key': `order-${randomUUID()}` };
  expect((await submit(key, order)).status).toBe('reset');
  await realWait(300);
  expect((await submit(key, order)).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.submit.idempotent-retry')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.errors.not-retried: fails a client that sends a request refused with 401 again unchanged', async () => {
  world = await startWorld();
  const key = `sk-not-a-key-${randomUUID()}`;
  const [first, second] = [await submit(key), await submit(key)];
  expect([first.status, second.status]).toEqual([401, 401]);
  // The key as sent is judged, though no account knows it.
  const check = checkOf(await verdictOf(world, { key }), 'client.errors.not-retried');
  expect(check).toMatchObject({ status: 'fail', reason: 'POST /v1/tasks sent again unchanged after 401 invalid_api_key', evidence: ids(first, second) });
});

it('client.errors.not-retried: passes a client that corrects a request refused with 422 before sending it again', async () => {
  world = await startWorld();
  const key = await newKey();
  const refused = await submit(key, {}, { model: 'social-notes-data', input: { mode: 'note', agree: true } });
  expect([refused.status, (refused.body['error'] as { code: string }).code]).toEqual([422, 'invalid_params']);
  expect((await submit(key)).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.errors.not-retried')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.retries.back-off: fails a client that retries a 503 at once, again and again', async () => {
  world = await startWorld();
  const key = await newKey();
  await addFaults(world, [{ match: { path: '/v1/models', key }, fault: { kind: 'error', code: 'service_unavailable' }, times: 3 }]);
  const answers: Answered[] = [];
  do answers.push(await call(world, 'GET', '/v1/models', { key }));
  while (answers.at(-1)?.status === 503);
  expect(answers.map((a) => a.status)).toEqual([503, 503, 503, 200]);
  const check = checkOf(await verdictOf(world, { key }), 'client.retries.back-off');
  expect(check).toMatchObject({ status: 'fail', reason: 'GET /v1/models retried less than 250 ms after a failure', evidence: ids(...answers) });
});

it('client.retries.back-off: passes a client that doubles its wait between retries', async () => {
  world = await startWorld();
  const key = await newKey();
  await addFaults(world, [{ match: { path: '/v1/models', key }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2 }]);
  const statuses: (number | 'reset')[] = [];
  for (let wait = 300; ; wait *= 2) {
    const answer = await call(world, 'GET', '/v1/models', { key });
    statuses.push(answer.status);
    if (answer.status !== 503) break;
    await realWait(wait);
  }
  expect(statuses).toEqual([503, 503, 200]);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.retries.back-off')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.polling.interval: fails a client that reads its task right after submitting it', async () => {
  world = await startWorld();
  const key = await newKey();
  const submitted = await submit(key, { 'X-Emulator-Scenario': 'default' });
  const read = await call(world, 'GET', `/v1/tasks/${String(submitted.body['id'])}`, { key });
  expect(read.status).toBe(200);
  const check = checkOf(await verdictOf(world, { key }), 'client.polling.interval');
  expect(check).toMatchObject({ status: 'fail', evidence: ids(submitted, read) });
  expect(check?.reason).toMatch(/read \d+ ms after the previous submit \(at least 3000 ms\)/);
});

it('client.polling.interval: passes a client that waits 3 seconds before its first read', async () => {
  world = await startWorld();
  const key = await newKey();
  const submitted = await submit(key, { 'X-Emulator-Scenario': 'default' });
  await realWait(3000);
  expect((await call(world, 'GET', `/v1/tasks/${String(submitted.body['id'])}`, { key })).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.polling.interval')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.polling.stops: fails a client that reads a task again after it answered succeeded', async () => {
  world = await startWorld();
  const key = await newKey();
  const id = String((await submit(key)).body['id']);
  await advance(world, 0);
  const done = await call(world, 'GET', `/v1/tasks/${id}`, { key });
  expect(done.body['status']).toBe('succeeded');
  const again = await call(world, 'GET', `/v1/tasks/${id}`, { key });
  const check = checkOf(await verdictOf(world, { key }), 'client.polling.stops');
  expect(check).toMatchObject({ status: 'fail', reason: `task ${id} read again after a read answered succeeded`, evidence: ids(done, again) });
});

it('client.polling.stops: passes a client that waits for the callback and reads its task once to confirm', async () => {
  world = await startWorld();
  const key = await newKey();
  const id = String((await submit(key)).body['id']);
  await advance(world, 0);
  expect(world.receiver.received).toHaveLength(1);
  expect((await call(world, 'GET', `/v1/tasks/${id}`, { key })).body['status']).toBe('succeeded');
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.polling.stops')?.status).toBe('pass');
  // The one confirming read after an acknowledged callback owes no polling interval.
  expect(checkOf(verdict, 'client.polling.interval')?.status).toBe('not_exercised');
  expect(checkOf(verdict, 'receiver.acknowledges')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});
