import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { checkReceiver } from '../../src/index.ts';
import { ReceiverCheckOptionError, ReceiverUnreachable } from '../../src/receiver-check/index.ts';
import { judge, RECEIVER_RULES, VERDICT_CHECKS } from '../../src/verdict/index.ts';
import type { ReceiverAnswer, ReceiverDelivery } from '../../src/verdict/index.ts';
import { startTestReceiver } from './receivers.ts';
import type { TestReceiver } from './receivers.ts';

// One checker, two feeders: the verdict's receiver.* checks and receiver-check's checks are the same rules
// (src/verdict/receiver-checks.ts). Fed the same answers, through the verdict's judge() or a rule itself, they say
// the same; a receiver-check run's own answers, fed to the verdict as a client log, get the same verdict there.

const SECRET = 'whsec_c2hhcmVkIHJ1bGVzIHRlc3Qgc2VjcmV0';
let receiver: TestReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

let n = 0;
const answer = (kind: ReceiverDelivery['kind'], outcome: ReceiverAnswer['outcome'], elapsedMs = 20): ReceiverAnswer => ({
  webhookId: `msg_${++n}`,
  account: 'acct_1',
  taskId: 'T261123093000AB12CD',
  kind: kind as ReceiverAnswer['kind'],
  atMs: 1000,
  outcome,
  elapsedMs,
});
const verdictOf = (callbacks: ReceiverAnswer[]) => judge({ requests: [], callbacks }).checks.filter((c) => c.id.startsWith('receiver.'));
const rulesOf = (callbacks: ReceiverAnswer[]) =>
  VERDICT_CHECKS.flatMap((c) => RECEIVER_RULES.filter((r) => r.id === c.id)).map((r) => r.judge({ answers: callbacks }, { callbackTimeoutMs: 10_000 }));

it('gives the verdict four of the shared rules, the ones the emulator’s deliveries exercise, with the same words', () => {
  const verdictReceiver = VERDICT_CHECKS.filter((c) => c.id.startsWith('receiver.'));
  expect(verdictReceiver.map((c) => c.id)).toEqual(['receiver.acknowledges', 'receiver.rejects-forged-signature', 'receiver.rejects-stale-timestamp', 'receiver.acknowledges-duplicate']);
  for (const check of verdictReceiver) expect(check.holds).toBe(RECEIVER_RULES.find((r) => r.id === check.id)?.holds);
});

it.each([
  ['every delivery taken or turned away as it should be', [answer('message', 200), answer('duplicate', 204), answer('forged_signature', 401), answer('stale_timestamp', 400)]],
  ['a refused callback and a taken forgery', [answer('message', 500), answer('forged_signature', 200)]],
  ['a duplicate answered late: receiver.acknowledges judges the time, the duplicate rule the status', [answer('message', 200), answer('duplicate', 200, 12_000)]],
  ['a duplicate that timed out: unknown to the duplicate rule', [answer('message', 200), answer('duplicate', 'timeout')]],
  ['a stale probe that timed out: nothing was turned away', [answer('stale_timestamp', 'timeout')]],
  ['a rotation refused and a cut body taken (rules the emulator never feeds)', [answer('rotation', 401), answer('truncated_body', 200)]],
])('judges %s the same through the verdict and through the rules', (_case, callbacks) => {
  expect(verdictOf(callbacks)).toEqual(rulesOf(callbacks));
});

it('moves the time of a late duplicate to receiver.acknowledges, and leaves its status to receiver.acknowledges-duplicate', () => {
  const late = answer('duplicate', 200, 12_000);
  const [acknowledges, , , duplicate] = verdictOf([answer('message', 200), late]);
  expect(acknowledges).toMatchObject({ status: 'fail', reason: `the receiver answered 200 after 12000 ms to the duplicate of callback ${late.webhookId}` });
  expect(duplicate).toMatchObject({ status: 'pass' });
  const [, , , unknown] = verdictOf([answer('message', 200), answer('duplicate', 'timeout')]);
  expect(unknown).toMatchObject({ status: 'not_exercised', reason: expect.stringContaining('receiver.acknowledges judges the time') });
});

it('gives a receiver-check run’s own answers, fed to the verdict, the verdict the run reported', async () => {
  receiver = await startTestReceiver(SECRET, 'accepts-forged');
  const report = await checkReceiver({ url: receiver.url, secret: SECRET, slowBodyMs: 100 });
  const seen = new Map<string, ReceiverAnswer>();
  for (const d of report.checks.flatMap((c) => c.deliveries)) {
    seen.set(`${d.webhook_id} ${d.kind} ${d.sent}`, { ...answer(d.kind, d.outcome, d.elapsed_ms), webhookId: d.webhook_id });
  }
  expect(seen.size).toBe(report.sent);
  const verdict = verdictOf([...seen.values()]);
  const shared = report.checks.filter((c) => verdict.some((v) => v.id === c.id));
  expect(shared.map((c) => c.id)).toHaveLength(4);
  expect(verdict.map(({ id, status, evidence }) => ({ id, status, evidence }))).toEqual(
    verdict.map((v) => shared.find((c) => c.id === v.id)).map((c) => ({ id: c?.id, status: c?.status, evidence: c?.evidence })),
  );
  expect(verdict.find((v) => v.id === 'receiver.rejects-forged-signature')?.status).toBe('fail');
});

it('stops at the first connection that cannot be made: a receiver gone after its first answer ends the run', async () => {
  let answered = 0;
  const server = createServer((req, res) => {
    req.resume();
    answered += 1;
    // Answers, then stops listening: every later connection is refused.
    server.close();
    res.writeHead(200, { Connection: 'close' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const run = checkReceiver({ url, secret: SECRET, slowBodyMs: 100 });
  await expect(run).rejects.toThrow(ReceiverUnreachable);
  await expect(run).rejects.toThrow(`cannot reach ${url} (connection refused)`);
  expect(answered).toBe(1);
});

it('refuses options it cannot use, naming the option', async () => {
  await expect(checkReceiver({ url: 'http://127.0.0.1:1/', secret: 'not-a-secret' })).rejects.toThrow(new ReceiverCheckOptionError('secret', "must start with whsec_ (the account's signing secret)"));
  await expect(checkReceiver({ url: 'http://127.0.0.1:1/', secret: SECRET, timeoutMs: 0 })).rejects.toMatchObject({ option: 'timeoutMs' });
  await expect(checkReceiver({ url: 'mailto:x@example.com', secret: SECRET })).rejects.toMatchObject({ option: 'url' });
  await expect(checkReceiver({ url: 'http://127.0.0.1:1/', secret: SECRET, only: ['*forged*', 'client.*'] })).rejects.toMatchObject({ option: 'only', message: expect.stringContaining('client.* names no check') });
});
