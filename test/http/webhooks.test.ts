import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it, vi } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { failFirst, startReceiver } from '../support/receiver.ts';
import type { Answer, Received, Receiver } from '../support/receiver.ts';

// Callbacks reach a real receiver on a local port and are verified with the Standard Webhooks library and,
// independently, by hand from the reference's five verification steps.

let t: TestEmulator;
let receiver: Receiver;
let account: { id: string; key: string; secret: string };
let api: ApiClient;

async function setUp(answer?: Answer, options: Parameters<typeof startEmulator>[0] = {}): Promise<void> {
  receiver = await startReceiver(answer);
  t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, ...options });
  const created = await newAccount(t, '10000.000');
  const set = await t.admin.post(`/_emulator/accounts/${created.id}/webhook`, { url: receiver.url });
  expect(set.status).toBe(200);
  account = { ...created, secret: set.body.webhook_secret as string };
  api = t.as(account.key);
}
afterEach(async () => {
  await t.close();
  await receiver.close();
});

const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const deliveries = async (taskId: string) => (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${taskId}`)).body.data;
const finishNow = async (scenario = 'instant', body = socialNote()) => {
  const { id } = (await api.post('/v1/tasks', body, { 'X-Emulator-Scenario': scenario })).body;
  await advance(0);
  return id as string;
};
const headersOf = (r: Received): Record<string, string> =>
  Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

/** The reference's verification, step by step, with nothing but node:crypto. */
function verifyByHand(secret: string, r: Received, nowSeconds = Date.now() / 1000): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = Buffer.concat([Buffer.from(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.`), r.raw]);
  const expected = createHmac('sha256', key).update(signed).digest();
  const matches = String(r.headers['webhook-signature'])
    .split(' ')
    .map((entry) => Buffer.from(entry.replace(/^v1,/, ''), 'base64'))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
  return matches && Math.abs(nowSeconds - Number(r.headers['webhook-timestamp'])) <= 300;
}

const verifyWithLibrary = (secret: string, r: Received): unknown => new Webhook(secret).verify(r.raw.toString('utf8'), headersOf(r));

it('delivers a signed task.succeeded callback at the first attempt, verifiable by the library and by hand', async () => {
  await setUp();
  const id = await finishNow();
  expect(receiver.received).toHaveLength(1);
  const [r] = receiver.received as [Received];
  expect(r.method).toBe('POST');
  expect(r.headers['user-agent']).toBe('Svc-Webhook/1.0');
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9]+$/);
  expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  // The virtual clock says 2026-11-23 09:00; the timestamp is the real time of the send.
  expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
  const envelope = verifyWithLibrary(account.secret, r) as { type: string; timestamp: string; data: unknown };
  expect(verifyByHand(account.secret, r)).toBe(true);
  const task = (await api.get(`/v1/tasks/${id}`)).body;
  expect(envelope).toEqual({ type: 'task.succeeded', timestamp: '2026-11-23T09:00:00+08:00', data: task });
  const [delivery] = await deliveries(id);
  expect(delivery).toMatchObject({ id: r.headers['webhook-id'], status: 'delivered', type: 'task.succeeded', next_attempt_at: null });
  expect(delivery.body).toBe(r.raw.toString('utf8'));
  expect(delivery.attempts).toEqual([
    expect.objectContaining({ number: 1, kind: 'automatic', at: '2026-11-23T09:00:00+08:00', status_code: 200, error: null, ok: true, response_excerpt: 'ok' }),
  ]);
});

it('retries a failing receiver at exactly +1 min, +5 min, +30 min, +2 h and +6 h, and stops at the success', async () => {
  await setUp(failFirst(5));
  const id = await finishNow();
  await advance(9 * 3600);
  expect(receiver.received).toHaveLength(6);
  const [delivery] = await deliveries(id);
  expect(delivery.attempts.map((a: { at: string }) => a.at)).toEqual([
    '2026-11-23T09:00:00+08:00',
    '2026-11-23T09:01:00+08:00',
    '2026-11-23T09:06:00+08:00',
    '2026-11-23T09:36:00+08:00',
    '2026-11-23T11:36:00+08:00',
    '2026-11-23T17:36:00+08:00',
  ]);
  expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 500, 500, 500, 200]);
  expect(delivery.status).toBe('delivered');
  expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  for (const r of receiver.received) expect(verifyByHand(account.secret, r)).toBe(true);
  expect(new Set(receiver.received.map((r) => r.raw.toString())).size).toBe(1);
});

it('gives up after 6 failed attempts: no seventh', async () => {
  await setUp(failFirst(100, 503));
  const id = await finishNow();
  await advance(8 * 3600 + 35 * 60);
  const [pending] = await deliveries(id);
  expect(pending).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T17:36:00+08:00' });
  await advance(3 * 24 * 3600);
  expect(receiver.received).toHaveLength(6);
  const [delivery] = await deliveries(id);
  expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null });
  expect(delivery.attempts.every((a: { ok: boolean; status_code: number }) => !a.ok && a.status_code === 503)).toBe(true);
});

it('counts a 301 as a failure and does not follow it', async () => {
  await setUp((n, res) => void (n === 0 ? res.writeHead(301, { Location: '/elsewhere' }).end() : res.writeHead(204).end()));
  const id = await finishNow();
  expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
  await advance(60);
  expect(receiver.received.map((r) => r.path)).toEqual(['/hook', '/hook']);
  const [delivery] = await deliveries(id);
  expect(delivery.attempts.map((a: { status_code: number; ok: boolean }) => [a.status_code, a.ok])).toEqual([
    [301, false],
    [204, true],
  ]);
});

it('counts an answer later than the timeout as a failure (a short configured timeout stands in for 10 s)', async () => {
  await setUp((n, res) => void setTimeout(() => res.writeHead(200).end('late'), n === 0 ? 1000 : 0));
  const id = await finishNow();
  const [delivery] = await deliveries(id);
  expect(delivery.attempts[0]).toMatchObject({ status_code: null, ok: false, error: 'no answer within 300 ms' });
  expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(290);
  expect(delivery.next_attempt_at).toBe('2026-11-23T09:01:00+08:00');
});

it('counts a refused connection as a failure and retries it', async () => {
  await setUp();
  const closedUrl = receiver.url;
  await receiver.close();
  const { id } = (await api.post('/v1/tasks', { ...socialNote(), webhook_url: closedUrl }, { 'X-Emulator-Scenario': 'instant' })).body;
  await advance(0);
  const [delivery] = await deliveries(id);
  expect(delivery.attempts[0]).toMatchObject({ status_code: null, ok: false, error: expect.stringContaining('ECONNREFUSED') });
  expect(delivery).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:00+08:00' });
});

it('sends task.failed and task.canceled callbacks, a canceled one at once without a clock step', async () => {
  await setUp();
  const failed = await finishNow('no_result');
  await advance(60);
  const canceled = (await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'timeout-in-queue' })).body.id;
  await api.post(`/v1/tasks/${canceled}/cancel`);
  await t.emulator.clock.runDue();
  const types = receiver.received.map((r) => (verifyWithLibrary(account.secret, r) as { type: string; data: { id: string } }));
  expect(types.map((e) => [e.type, e.data.id])).toEqual([
    ['task.failed', failed],
    ['task.canceled', canceled],
  ]);
});

it("calls back the task's own webhook_url over the account default, and nobody when neither is set", async () => {
  await setUp();
  const other = await startReceiver();
  try {
    const own = (await api.post('/v1/tasks', { ...socialNote(), webhook_url: other.url }, { 'X-Emulator-Scenario': 'instant' })).body.id;
    await advance(0);
    expect(other.received).toHaveLength(1);
    expect(receiver.received).toHaveLength(0);
    expect(JSON.parse(other.received[0]?.raw.toString() ?? '{}').data.id).toBe(own);
    const quiet = (await t.api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' })).body.id;
    await advance(0);
    expect(await deliveries(quiet)).toEqual([]);
  } finally {
    await other.close();
  }
});

it('resends at once with the same webhook-id, and does not retry a failed resend', async () => {
  await setUp(failFirst(100));
  const id = await finishNow();
  const [first] = await deliveries(id);
  const resent = await t.admin.post(`/_emulator/webhooks/deliveries/${first.id}/resend`);
  expect(resent.body.attempts.map((a: { kind: string }) => a.kind)).toEqual(['automatic', 'resend']);
  expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([first.id, first.id]);
  await advance(60);
  // Only the automatic schedule goes on: the second automatic attempt, nothing for the resend.
  expect((await deliveries(id))[0].attempts.map((a: { kind: string }) => a.kind)).toEqual(['automatic', 'resend', 'automatic']);
  expect((await t.admin.post('/_emulator/webhooks/deliveries/msg_nope/resend')).status).toBe(404);
});

it('signs with both keys for 24 clock hours after a rotation, each verifiable alone', async () => {
  await setUp();
  const rotated = await t.admin.post(`/_emulator/accounts/${account.id}/webhook/rotate`);
  const newSecret = rotated.body.webhook_secret as string;
  expect(newSecret).not.toBe(account.secret);
  expect(rotated.body.previous_webhook_secrets).toEqual([{ secret: account.secret, expires_at: '2026-11-24T09:00:00+08:00' }]);
  await finishNow();
  const [r] = receiver.received as [Received];
  expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
  for (const secret of [account.secret, newSecret]) {
    expect(verifyWithLibrary(secret, r)).toMatchObject({ type: 'task.succeeded' });
    expect(verifyByHand(secret, r)).toBe(true);
  }
  await advance(24 * 3600);
  await finishNow();
  const later = receiver.received[1] as Received;
  expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
  expect(verifyByHand(newSecret, later)).toBe(true);
  expect(verifyByHand(account.secret, later)).toBe(false);
});

it('produces callbacks a verifier rejects when the body is tampered with or the timestamp is over 5 minutes old', async () => {
  await setUp();
  await finishNow();
  const r = receiver.received[0] as Received;
  const tampered = { ...r, raw: Buffer.from(r.raw.toString().replace('succeeded', 'failed')) };
  expect(() => verifyWithLibrary(account.secret, tampered)).toThrow();
  expect(verifyByHand(account.secret, tampered)).toBe(false);
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(Number(r.headers['webhook-timestamp']) * 1000 + 301_000);
    expect(() => verifyWithLibrary(account.secret, r)).toThrow();
    expect(verifyByHand(account.secret, r)).toBe(false);
  } finally {
    vi.useRealTimers();
  }
});

it('sends webhook-timestamp from the virtual clock when started with virtual timestamps', async () => {
  await setUp(undefined, { webhookTimestamps: 'virtual' });
  await advance(3600);
  await finishNow();
  const r = receiver.received[0] as Received;
  expect(Number(r.headers['webhook-timestamp'])).toBe(Date.parse('2026-11-23T10:00:00+08:00') / 1000);
  expect(verifyByHand(account.secret, r, Date.parse('2026-11-23T10:00:00+08:00') / 1000)).toBe(true);
});

it('sends a webhook.test event to the default address at once', async () => {
  await setUp();
  const res = await t.admin.post(`/_emulator/accounts/${account.id}/webhook/test`);
  expect(res.body).toMatchObject({ type: 'webhook.test', task_id: null, status: 'delivered' });
  const r = receiver.received[0] as Received;
  expect(verifyWithLibrary(account.secret, r)).toEqual({
    type: 'webhook.test',
    timestamp: '2026-11-23T09:00:00+08:00',
    data: { message: expect.any(String), account_webhook: true },
  });
  const bare = await newAccount(t);
  const none = await t.admin.post(`/_emulator/accounts/${bare.id}/webhook/test`);
  expect(none.status).toBe(422);
});

it('keeps a pending retry across a restart of a file-backed emulator', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-webhooks-'));
  try {
    const db = join(dir, 'db.json');
    await setUp(failFirst(1), { db });
    const id = await finishNow();
    await t.close();
    t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, db });
    expect((await deliveries(id))[0]).toMatchObject({ status: 'pending', next_attempt_at: '2026-11-23T09:01:00+08:00' });
    await advance(60);
    expect((await deliveries(id))[0].status).toBe('delivered');
    expect(receiver.received).toHaveLength(2);
    await t.close();
  } finally {
    // afterEach closes again: a closed emulator's close does nothing more, so the folder can go now.
    await rm(dir, { recursive: true, force: true });
  }
});
