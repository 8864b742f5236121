import { afterEach, expect, it } from 'vitest';
import { socialNote } from '../support/harness.ts';
import { failFirst } from '../support/receiver.ts';
import type { Received } from '../support/receiver.ts';
import { addFaults, advance, arrivals, call, startWorld, verifies } from './world.ts';
import type { World } from './world.ts';

// Callback faults (`POST /_emulator/faults` with a callback kind) against a real receiver, each delivery verified
// with the Standard Webhooks library: a duplicate under the same webhook-id, a delay in virtual seconds, a later
// task's callback before an earlier one's, a forged delivery before the real one. None of them changes the real
// delivery's retries or the outcome stored for it.

let world: World;
afterEach(() => world.close());

/** Submits a task that ends at once and lets the virtual clock run what is due; resolves with its id. */
async function finishTask(): Promise<string> {
  const submitted = await call(world, 'POST', '/v1/tasks', { body: socialNote(), headers: { 'X-Emulator-Scenario': 'instant' } });
  expect(submitted.status).toBe(200);
  await advance(world, 0);
  return submitted.body['id'] as string;
}
const deliveriesOf = async (taskId: string) => (await world.t.admin.get(`/_emulator/webhooks/deliveries?task_id=${taskId}&order=oldest`)).body.data;

it('duplicate: delivers the message twice under the same webhook-id, both verifying, listed as a duplicate attempt', async () => {
  world = await startWorld();
  await addFaults(world, [{ match: { event: 'task.succeeded' }, fault: { kind: 'duplicate' }, times: 1 }]);
  const id = await finishTask();
  const received = world.receiver.received;
  expect(received).toHaveLength(2);
  const [first, second] = received as [Received, Received];
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(second.raw.equals(first.raw)).toBe(true);
  expect(received.every((r) => verifies(world.account.secret, r))).toBe(true);
  const [delivery] = await deliveriesOf(id);
  expect(delivery).toMatchObject({ id: first.headers['webhook-id'], status: 'delivered', next_attempt_at: null });
  expect(delivery.attempts.map((a: { kind: string; ok: boolean }) => [a.kind, a.ok])).toEqual([
    ['automatic', true],
    ['duplicate', true],
  ]);
  // `times: 1`: the next task's callback comes once.
  await finishTask();
  expect(world.receiver.received).toHaveLength(3);
});

it('duplicate: a duplicate the receiver takes does not deliver a message whose real attempt failed, nor move its retry', async () => {
  world = await startWorld(() => failFirst(1));
  await addFaults(world, [{ fault: { kind: 'duplicate' }, times: 1 }]);
  const id = await finishTask();
  let [delivery] = await deliveriesOf(id);
  expect(delivery.attempts.map((a: { kind: string; status_code: number }) => [a.kind, a.status_code])).toEqual([
    ['automatic', 500],
    ['duplicate', 200],
  ]);
  expect(delivery).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:00+08:00' });
  await advance(world, 60);
  [delivery] = await deliveriesOf(id);
  expect(delivery.attempts.map((a: { kind: string; at: string }) => [a.kind, a.at])).toEqual([
    ['automatic', '2026-11-23T09:00:00+08:00'],
    ['duplicate', '2026-11-23T09:00:00+08:00'],
    ['automatic', '2026-11-23T09:01:00+08:00'],
  ]);
  expect(delivery.status).toBe('delivered');
  expect(new Set(world.receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
});

it('delay: holds the first attempt for the virtual seconds the rule says, then sends it stamped with that time', async () => {
  world = await startWorld();
  await addFaults(world, [{ fault: { kind: 'delay', seconds: 90 } }]);
  const id = await finishTask();
  expect(world.receiver.received).toHaveLength(0);
  const [waiting] = await deliveriesOf(id);
  expect(waiting).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:30+08:00', attempts: [] });
  await advance(world, 89);
  expect(world.receiver.received).toHaveLength(0);
  await advance(world, 1);
  expect(world.receiver.received).toHaveLength(1);
  expect(verifies(world.account.secret, world.receiver.received[0] as Received)).toBe(true);
  const [delivery] = await deliveriesOf(id);
  expect(delivery.attempts).toEqual([expect.objectContaining({ kind: 'automatic', at: '2026-11-23T09:01:30+08:00', ok: true })]);
});

it("out_of_order: a held callback goes right after the next one of its account, so the later task's arrives first", async () => {
  world = await startWorld();
  await addFaults(world, [{ fault: { kind: 'out_of_order' }, times: 1 }]);
  const earlier = await finishTask();
  expect(world.receiver.received).toHaveLength(0);
  const later = await finishTask();
  expect(arrivals(world).map((a) => a.taskId)).toEqual([later, earlier]);
  expect(world.receiver.received.every((r) => verifies(world.account.secret, r))).toBe(true);
  const [held] = await deliveriesOf(earlier);
  expect(held).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ kind: 'automatic', at: '2026-11-23T09:00:00+08:00', ok: true })] });
});

it('out_of_order: with no later callback, a held one goes at the end of its 60-second hold', async () => {
  world = await startWorld();
  await addFaults(world, [{ fault: { kind: 'out_of_order' }, times: 1 }]);
  const id = await finishTask();
  expect((await deliveriesOf(id))[0]).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:00+08:00' });
  await advance(world, 59);
  expect(world.receiver.received).toHaveLength(0);
  await advance(world, 1);
  expect(arrivals(world).map((a) => a.taskId)).toEqual([id]);
  const [delivery] = await deliveriesOf(id);
  expect(delivery.attempts).toEqual([expect.objectContaining({ kind: 'automatic', at: '2026-11-23T09:01:00+08:00', ok: true })]);
});

it('forged_signature: sends a delivery with its own webhook-id and a signature that does not verify, before the real one', async () => {
  world = await startWorld();
  await addFaults(world, [{ match: { account: world.account.id }, fault: { kind: 'forged_signature' }, times: 1 }]);
  const id = await finishTask();
  const [forged, real] = world.receiver.received as [Received, Received];
  expect(world.receiver.received).toHaveLength(2);
  expect(verifies(world.account.secret, forged)).toBe(false);
  expect(verifies(world.account.secret, real)).toBe(true);
  expect(forged.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9]+$/);
  expect(forged.headers['webhook-id']).not.toBe(real.headers['webhook-id']);
  // The same message, and a fresh timestamp: only the signature gives it away.
  expect(forged.raw.equals(real.raw)).toBe(true);
  expect(Math.abs(Number(forged.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);

  const listed = await deliveriesOf(id);
  expect(listed.map((d: { id: string; status: string; attempts: { kind: string }[] }) => [d.id, d.status, d.attempts.map((a) => a.kind)])).toEqual([
    [real.headers['webhook-id'], 'delivered', ['automatic']],
    [forged.headers['webhook-id'], 'delivered', ['forged_signature']],
  ]);
  // Resent, the forged delivery is forged again: signed correctly, it would be a real message under a new id.
  const resent = await world.t.admin.post(`/_emulator/webhooks/deliveries/${String(forged.headers['webhook-id'])}/resend`);
  expect(resent.body.attempts.map((a: { kind: string }) => a.kind)).toEqual(['forged_signature', 'forged_signature']);
  expect(verifies(world.account.secret, world.receiver.received[2] as Received)).toBe(false);
});

it('forged_signature: a receiver refusing the forgery leaves the real delivery and its retries as they are', async () => {
  world = await startWorld((w) => (n, res) => void res.writeHead(verifies(w().account.secret, w().receiver.received[n] as Received) ? 204 : 401).end());
  await addFaults(world, [{ fault: { kind: 'forged_signature' } }]);
  const id = await finishTask();
  const listed = await deliveriesOf(id);
  const real = listed.find((d: { attempts: { kind: string }[] }) => d.attempts[0]?.kind === 'automatic');
  const forged = listed.find((d: { attempts: { kind: string }[] }) => d.attempts[0]?.kind === 'forged_signature');
  expect(real).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ status_code: 204 })] });
  expect(forged).toMatchObject({ status: 'failed', next_attempt_at: null, attempts: [expect.objectContaining({ status_code: 401, ok: false })] });
  // Nothing more goes out for either: the forged one is never retried.
  await advance(world, 9 * 3600);
  expect(world.receiver.received).toHaveLength(2);
});
