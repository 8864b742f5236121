import { afterEach, expect, it } from 'vitest';
import { createContract } from '../../src/contract/index.ts';
import { checkReceiver } from '../../src/index.ts';
import type { ReceiverCheckReport } from '../../src/index.ts';
import { RECEIVER_RULES } from '../../src/verdict/index.ts';
import { signatureHeader } from '../../src/webhooks/index.ts';
import { busier } from '../support/busy.ts';
import { startTestReceiver } from './receivers.ts';
import type { BehaviourName, TestReceiver } from './receivers.ts';

// receiver-check in-process (checkReceiver) against real receivers on local ports: the careful one, written with
// the standardwebhooks library, passes every check; each deliberately broken one (test/receiver-check/receivers.ts)
// fails exactly the check its mistake breaks, and no other. The slow body takes 300 ms here (3 s by default).

const SECRET = 'whsec_cmVjZWl2ZXItY2hlY2sgdGVzdCBzZWNyZXQ=';
const ROTATED = 'whsec_cm90YXRlZCByZWNlaXZlci1jaGVjayBzZWNyZXQ=';
let receiver: TestReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function check(name: BehaviourName, over: { timeoutMs?: number } = {}): Promise<ReceiverCheckReport> {
  receiver = await startTestReceiver(SECRET, name);
  return checkReceiver({ url: receiver.url, secret: SECRET, rotatedSecret: ROTATED, effectsUrl: receiver.effectsUrl, slowBodyMs: 300, timeoutMs: 5_000 * busier, ...over });
}
const SCHEMAS = { 'task.succeeded': 'TaskSucceededEvent', 'task.failed': 'TaskFailedEvent', 'task.canceled': 'TaskCanceledEvent', 'webhook.test': 'WebhookTestEvent' } as const;
const failed = (report: ReceiverCheckReport): string[] => report.checks.filter((c) => c.status === 'fail').map((c) => c.id);
const status = (report: ReceiverCheckReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));

it('passes every check against a careful receiver written with the standardwebhooks library, effects hook included', async () => {
  const report = await check('careful');
  expect(status(report)).toEqual(Object.fromEntries(RECEIVER_RULES.map((r) => [r.id, 'pass'])));
  expect(report).toMatchObject({ ok: true, counts: { pass: RECEIVER_RULES.length, fail: 0, not_exercised: 0 }, sent: 27, url: receiver?.url });
  // Each check shows what it judged: the message id, what was sent, the status and the time it took.
  const stale = report.checks.find((c) => c.id === 'receiver.rejects-stale-timestamp');
  expect(stale?.deliveries).toEqual([
    { webhook_id: expect.stringMatching(/^msg_/), kind: 'stale_timestamp', sent: 'webhook-timestamp 10 minutes old', outcome: 400, elapsed_ms: expect.any(Number), answer: 'Message timestamp too old' },
    { webhook_id: expect.stringMatching(/^msg_/), kind: 'stale_timestamp', sent: 'webhook-timestamp 10 minutes ahead', outcome: 400, elapsed_ms: expect.any(Number), answer: 'Message timestamp too new' },
  ]);
  expect(report.checks.find((c) => c.id === 'receiver.acts-once')?.effects).toEqual([{ task_id: expect.stringMatching(/^T\d{12}[A-Z0-9]{6}$/), webhook_id: expect.any(String), acted: 1, detail: null }]);
});

it('sends every event type, each body valid against its event schema and signed as the emulator signs', async () => {
  const report = await check('careful');
  const received = receiver?.received ?? [];
  expect(received).toHaveLength(report.sent);
  const ids = (prefix: string): Set<string> => new Set(report.checks.filter((c) => c.id.startsWith(prefix)).flatMap((c) => c.deliveries.map((d) => d.webhook_id)));
  const refused = ids('receiver.rejects-');
  const rotation = ids('receiver.acknowledges-rotation');
  const taken = received.filter((r) => ids('receiver.acknowledges').has(String(r.headers['webhook-id'])) && !refused.has(String(r.headers['webhook-id'])));
  const signed = (r: (typeof received)[number], secrets: string[]): string =>
    signatureHeader(secrets, String(r.headers['webhook-id']), Number(r.headers['webhook-timestamp']), r.raw.toString('utf8'));

  const types = new Set<string>();
  const models = new Set<string>();
  for (const r of taken) {
    const body = JSON.parse(r.raw.toString('utf8')) as { type: keyof typeof SCHEMAS; data: { model?: string } };
    expect(() => createContract().body('service', SCHEMAS[body.type], body)).not.toThrow();
    types.add(body.type);
    if (body.type === 'task.succeeded' && body.data.model) models.add(body.data.model);
    // The emulator's own signer (src/webhooks) gives the same header for the same id, timestamp and bytes.
    if (!rotation.has(String(r.headers['webhook-id']))) expect(r.headers['webhook-signature']).toBe(signed(r, [SECRET]));
  }
  expect(taken.length).toBeGreaterThanOrEqual(14);
  expect([...types].sort()).toEqual(['task.canceled', 'task.failed', 'task.succeeded', 'webhook.test']);
  expect([...models].sort()).toEqual(['avatar-photo', 'social-notes-data', 'video-gen-2.0-fast']);
  // A rotation's two signatures, in either order, as the emulator signs during the overlap.
  const rotated = taken.filter((r) => rotation.has(String(r.headers['webhook-id'])));
  expect(rotated.map((r) => [signed(r, [ROTATED, SECRET]), signed(r, [SECRET, ROTATED])].indexOf(String(r.headers['webhook-signature']))).sort()).toEqual([0, 1]);
  expect(received.every((r) => r.headers['user-agent'] === 'Svc-Webhook/1.0' && r.headers['content-type'] === 'application/json')).toBe(true);
});

it.each([
  ['accepts forged messages (under a webhook-id it has handled)', 'accepts-forged', 'receiver.rejects-forged-signature', 'the receiver answered 200 to the forged delivery msg_'],
  ['refuses retries', 'refuses-retries', 'receiver.acknowledges-duplicate', 'the receiver answered 409 to the duplicate of callback msg_'],
  ['keeps no time window', 'no-time-window', 'receiver.rejects-stale-timestamp', 'the receiver answered 200 to the stale probe msg_'],
  ['breaks on a double signature', 'breaks-on-double-signature', 'receiver.acknowledges-rotation', 'the receiver answered 400 to the callback signed twice (key rotation) msg_'],
  ['verifies re-serialized JSON', 'verifies-reserialized-json', 'receiver.rejects-other-bytes', 'the receiver answered 200 to the delivery signed over other bytes msg_'],
  ['acts twice on a retried message', 'acts-twice', 'receiver.acts-once', 'task T'],
] as const)('fails a receiver that %s on exactly %s', async (_what, name, id, reason) => {
  const report = await check(name);
  expect(failed(report)).toEqual([id]);
  expect(report.counts).toEqual({ pass: RECEIVER_RULES.length - 1, fail: 1, not_exercised: 0 });
  const broken = report.checks.find((c) => c.id === id);
  expect(broken?.reason).toContain(reason);
  expect(broken?.evidence.length).toBeGreaterThan(0);
  expect(report.ok).toBe(false);
});

it('fails a receiver that answers after 12 s on exactly receiver.acknowledges: the others cannot tell its status in time', async () => {
  const report = await check('answers-after-12-s', { timeoutMs: 600 * busier });
  expect(failed(report)).toEqual(['receiver.acknowledges']);
  const acknowledges = report.checks.find((c) => c.id === 'receiver.acknowledges');
  expect(acknowledges?.reason).toMatch(/^the receiver did not answer in time to callback msg_\w+ \(webhook\.test\) \(and 14 more\)$/);
  expect(report.checks.find((c) => c.id === 'receiver.acknowledges-rotation')?.reason).toBe(
    `no answer came within ${600 * busier} ms to any of the 2 deliveries it judges, so whether they are acknowledged is unknown (receiver.acknowledges judges the time)`,
  );
  expect(acknowledges?.deliveries.every((d) => d.outcome === 'timeout')).toBe(true);
  // What it refuses it refuses at once; what it must take it takes too late to say.
  expect(report.checks.filter((c) => c.id.startsWith('receiver.rejects-')).every((c) => c.status === 'pass')).toBe(true);
  expect(report.checks.filter((c) => c.status === 'not_exercised').map((c) => c.id)).toEqual([
    'receiver.acknowledges-duplicate',
    'receiver.acknowledges-out-of-order',
    'receiver.acknowledges-rotation',
    'receiver.acknowledges-slow-body',
    'receiver.acknowledges-at-limits',
  ]);
});
