import { expect, it } from 'vitest';
import { checkHistory, createObserver } from '../../../src/observed/index.ts';
import { toExchange } from '../../../src/wire/index.ts';
import { checksOf, CONTEXT, task } from './histories.ts';

// `params` is the other name of `input` ("POST /v1/tasks"): under one Idempotency-Key the same parameters sent
// under either name are the same submission, a replay and no conflict.

const submit = (body: unknown, replayed: boolean, ms: number) => ({
  exchange: toExchange(
    { method: 'POST', path: '/v1/tasks', requestHeaders: { 'Idempotency-Key': 'k1' }, requestBody: JSON.stringify(body) },
    { status: 200, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': `req_${ms}`, ...(replayed ? { 'idempotent-replayed': 'true' } : {}) }), text: JSON.stringify(task('queued')) },
  ),
  sentMs: ms,
  receivedMs: ms + 5,
});
const params = { note: 'https://notes.example/n/1', agree: true };

it('takes params as what was sent under the key, so input with the same parameters is a replay', () => {
  const observer = createObserver();
  observer.exchange(submit({ model: 'social-notes-data', params }, false, 0));
  observer.exchange(submit({ model: 'social-notes-data', input: params }, true, 10));
  expect(observer.history.tasks?.map((t) => t.key?.input)).toEqual([params, params]);
  expect(checkHistory(observer.history, CONTEXT)).toEqual([]);
});

it('still holds other parameters under params to a conflict', () => {
  const observer = createObserver();
  observer.exchange(submit({ model: 'social-notes-data', params }, false, 0));
  observer.exchange(submit({ model: 'social-notes-data', params: { ...params, note: 'other' } }, true, 10));
  expect(checksOf(checkHistory(observer.history, CONTEXT))).toEqual(['tasks.idempotency.conflict-refused']);
});

it('uses input when both are sent, as the emulator does', () => {
  const observer = createObserver();
  observer.exchange(submit({ model: 'social-notes-data', input: params, params: { note: 'ignored' } }, false, 0));
  expect(observer.history.tasks?.[0]?.key?.input).toEqual(params);
});
