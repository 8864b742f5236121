import { describe, expect, it } from 'vitest';
import { judge } from '../../../src/verdict/index.ts';
import type { ClientRequest, ReceiverAnswer } from '../../../src/verdict/index.ts';
import { clientRequest } from './client-requests.ts';

let n = 0;
const req = (atMs: number, over: Partial<ClientRequest> = {}): ClientRequest => clientRequest(`req_${++n}`, atMs, over);
const get = (atMs: number, task: string, status: string, over: Partial<ClientRequest> = {}) =>
  req(atMs, { method: 'GET', path: `/v1/tasks/${task}`, bodyDigest: '', taskId: task, taskStatus: status, ...over });
const delivery = (kind: ReceiverAnswer['kind'], outcome: ReceiverAnswer['outcome'], over: Partial<ReceiverAnswer> = {}): ReceiverAnswer => ({
  webhookId: `msg_${++n}`,
  account: 'acct_1',
  taskId: 'task_1',
  kind,
  atMs: 1000,
  outcome,
  elapsedMs: 20,
  ...over,
});

function check(id: string, requests: ClientRequest[], callbacks: ReceiverAnswer[] = []) {
  const found = judge({ requests, callbacks }).checks.find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
}

describe('verdict on the client', () => {
  it('client.retry-after.respected: nothing before Retry-After has passed', () => {
    const limited = req(0, { path: '/v1/chat/completions', outcome: 429, errorCode: 'rate_limited', retryAfter: 2 });
    const careless = check('client.retry-after.respected', [limited, req(500, { path: '/v1/models', method: 'GET' })]);
    expect(careless.status).toBe('fail');
    expect(careless.evidence).toContain(limited.requestId);
    expect(check('client.retry-after.respected', [limited, req(2000, { path: '/v1/chat/completions' })]).status).toBe('pass');
    expect(check('client.retry-after.respected', [req(0)]).status).toBe('not_exercised');
  });

  it('client.submit.idempotent-retry: a submit retried after a failure keeps its Idempotency-Key', () => {
    for (const outcome of ['reset', 'timeout', 503, 429] as const) {
      expect(check('client.submit.idempotent-retry', [req(0, { outcome }), req(1000)]).status).toBe('fail');
      expect(check('client.submit.idempotent-retry', [req(0, { outcome, idempotencyKey: 'k1' }), req(1000, { idempotencyKey: 'k2' })]).status).toBe('fail');
      expect(check('client.submit.idempotent-retry', [req(0, { outcome, idempotencyKey: 'k1' }), req(1000, { idempotencyKey: 'k1' })]).status).toBe('pass');
    }
    // A same body long after is a new order, not a retry.
    expect(check('client.submit.idempotent-retry', [req(0, { outcome: 'reset' }), req(120_000)]).status).toBe('not_exercised');
  });

  it('client.errors.not-retried: a 4xx refusal is not sent again unchanged', () => {
    for (const outcome of [401, 402, 403, 404, 409, 422]) {
      expect(check('client.errors.not-retried', [req(0, { outcome }), req(400, { outcome })]).status).toBe('fail');
      expect(check('client.errors.not-retried', [req(0, { outcome }), req(400, { bodyDigest: 'fixed' })]).status).toBe('pass');
    }
    expect(check('client.errors.not-retried', [req(0, { outcome: 503 }), req(400)]).status).toBe('not_exercised');
  });

  it('client.retries.back-off: waits grow and attempts stay within budget', () => {
    const path = '/v1/chat/completions';
    const sdkLike = [req(0, { path, outcome: 503 }), req(450, { path, outcome: 503 }), req(1400, { path })];
    expect(check('client.retries.back-off', sdkLike).status).toBe('pass');
    const tight = [0, 10, 20, 30].map((t, i, all) => req(t, { path, outcome: i < all.length - 1 ? 503 : 200 }));
    expect(check('client.retries.back-off', tight)).toMatchObject({ status: 'fail', reason: expect.stringContaining('less than 250 ms') });
    const loop = Array.from({ length: 12 }, (_, i) => req(i * 300, { path, outcome: 503 }));
    expect(check('client.retries.back-off', loop)).toMatchObject({ status: 'fail', reason: expect.stringContaining('more than 6 attempts') });
    const shrinking = [req(0, { path, outcome: 503 }), req(2000, { path, outcome: 503 }), req(2500, { path })];
    expect(check('client.retries.back-off', shrinking)).toMatchObject({ status: 'fail', reason: expect.stringContaining('got shorter') });
  });

  it('client.polling.interval: reads of a task at least 3 s apart from its submit on', () => {
    const submit = req(0, { taskId: 'task_1', taskStatus: 'queued' });
    expect(check('client.polling.interval', [submit, get(500, 'task_1', 'queued')]).status).toBe('fail');
    expect(check('client.polling.interval', [submit, get(3000, 'task_1', 'processing'), get(8000, 'task_1', 'succeeded')]).status).toBe('pass');
    // The confirming read right after an acknowledged callback is not polling.
    const ack = delivery('message', 200, { atMs: 400 });
    expect(check('client.polling.interval', [submit, get(450, 'task_1', 'succeeded')], [ack]).status).toBe('not_exercised');
  });

  it('client.polling.stops: no read after a terminal state was read', () => {
    expect(check('client.polling.stops', [get(0, 'task_1', 'succeeded'), get(5000, 'task_1', 'succeeded')]).status).toBe('fail');
    expect(check('client.polling.stops', [get(0, 'task_1', 'processing'), get(5000, 'task_1', 'failed')]).status).toBe('pass');
    expect(check('client.polling.stops', [get(0, 'task_1', 'processing')]).status).toBe('not_exercised');
  });

  it('judges each key on its own', () => {
    const limited = req(0, { outcome: 429, retryAfter: 5, key: 'sk-a' });
    expect(check('client.retry-after.respected', [limited, req(100, { key: 'sk-b' })]).status).toBe('pass');
  });

  it('receiver checks: acknowledge in time, turn away forged and stale, acknowledge duplicates', () => {
    expect(check('receiver.acknowledges', [], [delivery('message', 200)]).status).toBe('pass');
    expect(check('receiver.acknowledges', [], [delivery('message', 500)]).status).toBe('fail');
    expect(check('receiver.acknowledges', [], [delivery('message', 200, { elapsedMs: 12_000 })]).status).toBe('fail');
    expect(check('receiver.rejects-forged-signature', [], [delivery('forged_signature', 401)]).status).toBe('pass');
    expect(check('receiver.rejects-forged-signature', [], [delivery('forged_signature', 204)]).status).toBe('fail');
    expect(check('receiver.rejects-forged-signature', [], [delivery('forged_signature', 'timeout')]).status).toBe('fail');
    expect(check('receiver.rejects-stale-timestamp', [], [delivery('stale_timestamp', 400)]).status).toBe('pass');
    expect(check('receiver.rejects-stale-timestamp', [], [delivery('stale_timestamp', 200)]).status).toBe('fail');
    expect(check('receiver.acknowledges-duplicate', [], [delivery('duplicate', 200)]).status).toBe('pass');
    expect(check('receiver.acknowledges-duplicate', [], [delivery('duplicate', 409)]).status).toBe('fail');
    expect(check('receiver.acknowledges-duplicate', [], []).status).toBe('not_exercised');
  });

  it('is ok only while no check failed', () => {
    const verdict = judge({ requests: [req(0, { outcome: 429, retryAfter: 1 }), req(10)], callbacks: [] });
    expect(verdict.ok).toBe(false);
    // A submit sent again 10 ms after a 429, without an Idempotency-Key: three things wrong at once.
    expect(verdict.checks.filter((c) => c.status === 'fail').map((c) => c.id)).toEqual([
      'client.retry-after.respected',
      'client.submit.idempotent-retry',
      'client.retries.back-off',
    ]);
    expect(judge({ requests: [], callbacks: [] })).toMatchObject({ ok: true, counts: { pass: 0, fail: 0, not_exercised: 10 } });
  });
});
