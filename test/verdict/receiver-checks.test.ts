import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it } from 'vitest';
import { socialNote } from '../support/harness.ts';
import type { Answer, Received } from '../support/receiver.ts';
import { addFaults, advance, call, carefulReceiver, checkOf, clean, startWorld, verdictOf, verifies } from './world.ts';
import type { World } from './world.ts';

// Each receiver check of the verdict, end to end: the emulator calls a real receiver back (a task's callback, a
// callback fault's duplicate or forged delivery, the stale-timestamp probe) and the verdict of
// `GET /_emulator/verdict?account=` judges what it answered. The careless receiver takes whatever comes (or turns
// away what it should take); the careful one verifies with the Standard Webhooks library and de-duplicates.

let world: World;
afterEach(() => world.close());

const acceptAll: Answer = (_n, res) => void res.writeHead(200).end('ok');
const verdict = () => verdictOf(world, { account: world.account.id });
async function finishTask(): Promise<string> {
  const submitted = await call(world, 'POST', '/v1/tasks', { body: socialNote(), headers: { 'X-Emulator-Scenario': 'instant' } });
  expect(submitted.status).toBe(200);
  await advance(world, 0);
  return submitted.body['id'] as string;
}
const webhookIds = () => world.receiver.received.map((r) => String(r.headers['webhook-id']));

it('receiver.acknowledges: fails a receiver that answers a callback with a 500', async () => {
  world = await startWorld(() => (_n, res) => void res.writeHead(500).end('not now'));
  await finishTask();
  const check = checkOf(await verdict(), 'receiver.acknowledges');
  expect(check).toMatchObject({ status: 'fail', reason: `the receiver answered 500 to callback ${webhookIds()[0]}`, evidence: webhookIds() });
});

it('receiver.acknowledges: fails a receiver that answers after the 10-second limit (here the emulator waits 1 s)', async () => {
  world = await startWorld(() => (_n, res) => void setTimeout(() => res.writeHead(200).end('late'), 1500));
  await finishTask();
  expect(checkOf(await verdict(), 'receiver.acknowledges')).toMatchObject({ status: 'fail', reason: `the receiver did not answer in time to callback ${webhookIds()[0]}` });
});

it('receiver.acknowledges: passes a receiver that verifies and acknowledges each callback', async () => {
  world = await startWorld(carefulReceiver);
  await finishTask();
  await finishTask();
  const judged = await verdict();
  expect(checkOf(judged, 'receiver.acknowledges')?.status).toBe('pass');
  expect(clean(judged)).toEqual([]);
});

it('receiver.rejects-forged-signature: fails a receiver that takes a delivery whose signature does not verify', async () => {
  world = await startWorld(() => acceptAll);
  await addFaults(world, [{ fault: { kind: 'forged_signature' }, times: 1 }]);
  await finishTask();
  const [forged] = world.receiver.received as [Received];
  expect(verifies(world.account.secret, forged)).toBe(false);
  const check = checkOf(await verdict(), 'receiver.rejects-forged-signature');
  expect(check).toMatchObject({ status: 'fail', reason: `the receiver answered 200 to the forged delivery ${String(forged.headers['webhook-id'])}` });
});

it('receiver.rejects-forged-signature: passes a receiver that verifies with the Standard Webhooks library', async () => {
  world = await startWorld(carefulReceiver);
  await addFaults(world, [{ fault: { kind: 'forged_signature' }, times: 1 }]);
  await finishTask();
  const judged = await verdict();
  expect(checkOf(judged, 'receiver.rejects-forged-signature')?.status).toBe('pass');
  expect(checkOf(judged, 'receiver.acknowledges')?.status).toBe('pass');
  expect(clean(judged)).toEqual([]);
});

it('receiver.rejects-stale-timestamp: the probe is correctly signed with a webhook-timestamp 10 minutes old; a receiver taking it fails', async () => {
  world = await startWorld(() => acceptAll);
  const probe = await world.t.admin.post('/_emulator/verdict/probe', { account: world.account.id });
  expect(probe.status).toBe(200);
  expect(probe.body).toEqual({ webhook_id: expect.stringMatching(/^msg_[A-Za-z0-9]+$/), url: world.receiver.url, status: 200 });
  const [r] = world.receiver.received as [Received];
  const timestamp = Number(r.headers['webhook-timestamp']);
  expect(Math.abs(Date.now() / 1000 - 600 - timestamp)).toBeLessThan(5);
  // Signed as the account signs: only the timestamp is wrong, so the library refuses it for that alone.
  expect(r.headers['webhook-signature']).toBe(new Webhook(world.account.secret).sign(String(r.headers['webhook-id']), new Date(timestamp * 1000), r.raw.toString('utf8')));
  expect(verifies(world.account.secret, r)).toBe(false);
  expect(JSON.parse(r.raw.toString('utf8'))).toMatchObject({ type: 'webhook.test' });
  const check = checkOf(await verdict(), 'receiver.rejects-stale-timestamp');
  expect(check).toMatchObject({ status: 'fail', reason: `the receiver answered 200 to the stale probe ${String(probe.body.webhook_id)}` });
  // Listed with its one attempt, never retried.
  const listed = await world.t.admin.get(`/_emulator/webhooks/deliveries/${String(probe.body.webhook_id)}`);
  expect(listed.body).toMatchObject({ type: 'webhook.test', status: 'delivered', next_attempt_at: null, attempts: [expect.objectContaining({ kind: 'stale_timestamp', webhook_timestamp: timestamp })] });
});

it('receiver.rejects-stale-timestamp: passes a receiver that checks the timestamp, as the library does', async () => {
  world = await startWorld(carefulReceiver);
  const probe = await world.t.admin.post('/_emulator/verdict/probe', { account: world.account.id, stale_seconds: 301 });
  expect(probe.body.status).toBe(400);
  const judged = await verdict();
  expect(checkOf(judged, 'receiver.rejects-stale-timestamp')?.status).toBe('pass');
  expect(clean(judged)).toEqual([]);
});

it('refuses a probe of an unknown account (404), of one without a callback address and a timestamp within the tolerance (422)', async () => {
  world = await startWorld();
  expect((await world.t.admin.post('/_emulator/verdict/probe', { account: 'acct_nobody' })).status).toBe(404);
  expect((await world.t.admin.post('/_emulator/verdict/probe', { account: world.account.id, stale_seconds: 300 })).status).toBe(422);
  const bare = await world.t.admin.post('/_emulator/accounts', { points: '1.000' });
  const refused = await world.t.admin.post('/_emulator/verdict/probe', { account: bare.body.id });
  expect([refused.status, refused.body.error.code]).toEqual([422, 'invalid_params']);
  expect(world.receiver.received).toHaveLength(0);
});

it('receiver.acknowledges-duplicate: fails a receiver that answers 409 to a webhook-id it has seen', async () => {
  const seen = new Set<string>();
  world = await startWorld((w) => (n, res) => {
    const id = String(w().receiver.received[n]?.headers['webhook-id']);
    const again = seen.has(id);
    seen.add(id);
    res.writeHead(again ? 409 : 200).end();
  });
  await addFaults(world, [{ fault: { kind: 'duplicate' }, times: 1 }]);
  await finishTask();
  expect(new Set(webhookIds()).size).toBe(1);
  const check = checkOf(await verdict(), 'receiver.acknowledges-duplicate');
  expect(check).toMatchObject({ status: 'fail', reason: `the receiver answered 409 to the duplicate of callback ${webhookIds()[0]}` });
});

it('receiver.acknowledges-duplicate: passes a receiver that acknowledges the duplicate and acts once', async () => {
  const acted: string[] = [];
  world = await startWorld((w) => (n, res) => {
    carefulReceiver(w)(n, res);
    const id = String(w().receiver.received[n]?.headers['webhook-id']);
    if (res.statusCode === 200 && !acted.includes(id)) acted.push(id);
  });
  await addFaults(world, [{ fault: { kind: 'duplicate' }, times: 1 }]);
  await finishTask();
  expect(world.receiver.received).toHaveLength(2);
  expect(acted).toHaveLength(1);
  const judged = await verdict();
  expect(checkOf(judged, 'receiver.acknowledges-duplicate')?.status).toBe('pass');
  expect(clean(judged)).toEqual([]);
});
