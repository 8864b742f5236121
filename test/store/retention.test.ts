import { afterEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { failFirst, startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { stateOf } from '../support/state.ts';

/**
 * Memory stays bounded on a long-running instance: call records go after 30 days, finished callback messages
 * after their retention, expired files at their expiry, all on the clock, and the sweeps cost what they drop.
 */

let t: TestEmulator;
let receiver: Receiver | null = null;
afterEach(async () => {
  await t.close();
  await receiver?.close();
  receiver = null;
});

const DAY = 24 * 3600;
const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const callIds = (): string[] => stateOf(t.emulator).calls.map((c) => c.request_id);

it('drops thousands of call records once they are 30 days old, in arrival order, and keeps the young', async () => {
  t = await startEmulator();
  const firstIds: string[] = [];
  for (let i = 0; i < 300; i += 1) firstIds.push((await t.api.get('/v1/models')).headers['x-request-id'] as string);
  await advance(10 * DAY);
  const young = (await t.api.get('/v1/models')).headers['x-request-id'] as string;
  expect(callIds().length).toBeGreaterThanOrEqual(301);

  await advance(20 * DAY + 3600);
  const left = callIds();
  expect(left.filter((id) => firstIds.includes(id))).toEqual([]);
  expect(left).toContain(young);
  // Requests made after the sweep are kept and swept in their turn.
  await advance(11 * DAY);
  expect(callIds()).not.toContain(young);
});

it('drops finished callback messages after the retention, keeps one still retrying, and resend then answers 404', async () => {
  receiver = await startReceiver(failFirst(1));
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, deliveryRetentionSeconds: 2 * DAY });
  const account = await newAccount(t, '10000.000');
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: receiver.url });
  const api = t.as(account.key);

  const delivered = (await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' })).body.id as string;
  await advance(0);
  const message = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${delivered}`)).body.data[0];
  expect(message).toMatchObject({ status: 'pending' });
  await advance(60);
  expect((await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${delivered}`)).body.data[0].status).toBe('delivered');

  await advance(DAY);
  expect((await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${delivered}`)).body.data).toHaveLength(1);
  await advance(DAY + 3600);
  expect((await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${delivered}`)).body.data).toEqual([]);
  const resend = await t.admin.post(`/_emulator/webhooks/deliveries/${message.id}/resend`);
  expect(resend.status).toBe(404);
  // The task itself is kept: only the message is gone.
  expect((await api.get(`/v1/tasks/${delivered}`)).body.status).toBe('succeeded');
});

it('keeps a message that is still retrying past the retention, and drops it once it is done', async () => {
  // A receiver that never answers 2xx: the message retries for 8.6 hours and then fails.
  receiver = await startReceiver((_n, res) => res.writeHead(500).end('no'));
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, deliveryRetentionSeconds: 3600 });
  const account = await newAccount(t, '10000.000');
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: receiver.url });
  const id = (await t.as(account.key).post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' })).body.id as string;
  const list = async () => (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${id}`)).body.data as { status: string }[];

  await advance(3 * 3600);
  expect((await list()).map((d) => d.status)).toEqual(['pending']);
  // The last retry is 8 h 36 min after the first attempt; the hourly sweep at 9 h finds it done.
  await advance(5 * 3600 + 50 * 60);
  expect((await list()).map((d) => d.status)).toEqual(['failed']);
  await advance(10 * 60);
  expect(await list()).toEqual([]);
});
