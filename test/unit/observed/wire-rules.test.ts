import { expect, it } from 'vitest';
import { checkHistory, createObserver, keyName } from '../../../src/observed/index.ts';
import type { AnswerObservation, History } from '../../../src/observed/index.ts';
import { toExchange } from '../../../src/wire/index.ts';
import { checksOf, CONTEXT, read, requestIdsOf, T0, TASK_ID, task } from './histories.ts';

// The rules of the wire: what one answer must fit, given what its request asked and what was read before it.

const KEY = 'sk-wire-rules-key';

/** An answer of `status` to `method path`, sent at `s` seconds and answered 50 ms later. */
function answer(requestId: string, method: string, path: string, status: number, extra: Partial<Omit<AnswerObservation, 'headers'>> & { headers?: Partial<AnswerObservation['headers']> } = {}): AnswerObservation {
  const { headers, ...rest } = extra;
  return {
    requestId,
    method,
    path,
    status,
    code: null,
    headers: { retryAfter: null, cacheControl: null, accelBuffering: null, contentType: 'application/json', ...headers },
    key: { id: keyName(KEY), via: 'bearer' },
    body: { kind: 'none' },
    sentMs: T0 + 1000,
    receivedMs: T0 + 1050,
    ...rest,
  };
}

const STREAM = { contentType: 'text/event-stream', cacheControl: 'no-cache, no-transform', accelBuffering: 'no' };
const TEXT_OBJECT = { kind: 'object', fields: ['model', 'messages'] } as const;
const CANCEL = `/v1/tasks/${TASK_ID}/cancel`;

it.each<[string, AnswerObservation[], string, string[]]>([
  ['a 429 rate_limited without Retry-After', [answer('req_a', 'GET', '/v1/tasks', 429, { code: 'rate_limited' })], 'wire.retry-after.rate-limited', ['req_a']],
  ['a 429 with an HTTP date for Retry-After', [answer('req_a', 'POST', '/v1/tasks', 429, { code: 'rate_limited', headers: { retryAfter: 'Wed, 21 Oct 2026 07:28:00 GMT' } })], 'wire.retry-after.rate-limited', ['req_a']],
  ['a 429 with no code and no Retry-After', [answer('req_a', 'GET', '/v1/tasks', 429)], 'wire.retry-after.rate-limited', ['req_a']],
  ['a stream without Cache-Control no-cache', [answer('req_a', 'POST', '/v1/chat/completions', 200, { headers: { ...STREAM, cacheControl: 'no-transform' } })], 'text.stream.no-buffering', ['req_a']],
  ['a stream without X-Accel-Buffering', [answer('req_a', 'POST', '/v1/messages', 200, { headers: { ...STREAM, accelBuffering: null } })], 'text.stream.no-buffering', ['req_a']],
  ['a 409 to a cancel that is not task_not_cancelable', [answer('req_a', 'POST', CANCEL, 409, { code: 'idempotency_conflict' })], 'tasks.cancel.conflict-code', ['req_a']],
  ['a 404 to a task’s GET that is model_unavailable', [answer('req_a', 'GET', `/v1/tasks/${TASK_ID}`, 404, { code: 'model_unavailable' })], 'tasks.not-found.code', ['req_a']],
  ['a 404 to a cancel without a code', [answer('req_a', 'POST', CANCEL, 404)], 'tasks.not-found.code', ['req_a']],
  ['a text body that is not a JSON object answered 422', [answer('req_a', 'POST', '/v1/chat/completions', 422, { code: 'invalid_params', body: { kind: 'other' } })], 'text.bad-request.non-json', ['req_a']],
  ['a text body that is not a JSON object answered 400 of another code', [answer('req_a', 'POST', '/v1/messages', 400, { code: 'invalid_request', body: { kind: 'other' } })], 'text.bad-request.non-json', ['req_a']],
  ['a text body that is not a JSON object answered 200', [answer('req_a', 'POST', '/v1/responses', 200, { body: { kind: 'other' } })], 'text.bad-request.non-json', ['req_a']],
  ['previous_response_id answered 200', [answer('req_a', 'POST', '/v1/responses', 200, { body: { kind: 'object', fields: ['model', 'input', 'previous_response_id'] } })], 'text.responses.unsupported-refused', ['req_a']],
  ['tools answered 400 bad_request', [answer('req_a', 'POST', '/v1/responses', 400, { code: 'bad_request', body: { kind: 'object', fields: ['model', 'input', 'tools'] } })], 'text.responses.unsupported-refused', ['req_a']],
  [
    'a Messages call with x-api-key refused 401 while the same key is accepted as a bearer',
    [answer('req_a', 'GET', '/v1/models', 200), answer('req_b', 'POST', '/v1/messages', 401, { code: 'invalid_api_key', key: { id: keyName(KEY), via: 'x-api-key' }, body: TEXT_OBJECT })],
    'text.messages.x-api-key',
    ['req_a', 'req_b'],
  ],
])('reports %s', (_name, answers, check, requestIds) => {
  const found = checkHistory({ answers }, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it.each<[string, AnswerObservation[]]>([
  ['a 429 rate_limited with Retry-After in seconds', [answer('req_a', 'GET', '/v1/tasks', 429, { code: 'rate_limited', headers: { retryAfter: '12' } })]],
  ['a 429 concurrency_limited without Retry-After (the reference names none for it)', [answer('req_a', 'POST', '/v1/tasks', 429, { code: 'concurrency_limited' })]],
  ['a stream with no-cache among its directives and X-Accel-Buffering no', [answer('req_a', 'POST', '/v1/chat/completions', 200, { headers: { ...STREAM, cacheControl: 'No-Transform, NO-CACHE', accelBuffering: 'No' } })]],
  ['a 409 task_not_cancelable to a cancel', [answer('req_a', 'POST', CANCEL, 409, { code: 'task_not_cancelable' })]],
  ['a 404 not_found to a task’s GET', [answer('req_a', 'GET', `/v1/tasks/${TASK_ID}`, 404, { code: 'not_found' })]],
  ['a 404 model_unavailable to a submission', [answer('req_a', 'POST', '/v1/tasks', 404, { code: 'model_unavailable' })]],
  ['a text body that is not a JSON object answered 400 bad_request', [answer('req_a', 'POST', '/v1/chat/completions', 400, { code: 'bad_request', body: { kind: 'other' } })]],
  ['a text body that is not a JSON object refused for its key first', [answer('req_a', 'POST', '/v1/chat/completions', 401, { code: 'invalid_api_key', body: { kind: 'other' } })]],
  ['previous_response_id answered 422 invalid_params', [answer('req_a', 'POST', '/v1/responses', 422, { code: 'invalid_params', body: { kind: 'object', fields: ['previous_response_id'] } })]],
  ['tools with a model that does not exist answered 404', [answer('req_a', 'POST', '/v1/responses', 404, { code: 'model_unavailable', body: { kind: 'object', fields: ['tools'] } })]],
  ['tools on the chat endpoint answered 200', [answer('req_a', 'POST', '/v1/chat/completions', 200, { body: { kind: 'object', fields: ['tools'] } })]],
  [
    'a Messages call with an unknown key in x-api-key refused 401',
    [answer('req_a', 'GET', '/v1/models', 200), answer('req_b', 'POST', '/v1/messages', 401, { code: 'invalid_api_key', key: { id: keyName('sk-unknown'), via: 'x-api-key' }, body: TEXT_OBJECT })],
  ],
])('accepts %s', (_name, answers) => {
  expect(checkHistory({ answers }, CONTEXT)).toEqual([]);
});

it('reports a cancel answered 200 for a task already read succeeded, not one read succeeded only after the cancel was sent', () => {
  const cancel = answer('req_cancel', 'POST', CANCEL, 200, { sentMs: T0 + 30_000, receivedMs: T0 + 30_050 });
  const history = (readAtS: number): History => ({ tasks: [read('get', 'req_get', readAtS, task('succeeded'))], answers: [cancel] });
  const found = checkHistory(history(25), CONTEXT).filter((d) => d.check === 'tasks.cancel.terminal-conflict');
  expect(found.map((d) => d.requestIds)).toEqual([['req_get', 'req_cancel']]);
  expect(checkHistory(history(31), CONTEXT).filter((d) => d.check === 'tasks.cancel.terminal-conflict')).toEqual([]);
  // A 409 is the answer; a rate limit comes before the task is looked at.
  for (const [status, code] of [
    [409, 'task_not_cancelable'],
    [429, 'rate_limited'],
  ] as const) {
    const refused = answer('req_cancel', 'POST', CANCEL, status, { code, headers: { retryAfter: '1' }, sentMs: T0 + 30_000, receivedMs: T0 + 30_050 });
    expect(checkHistory({ tasks: [read('get', 'req_get', 25, task('canceled'))], answers: [refused] }, CONTEXT)).toEqual([]);
  }
  const notFound = answer('req_cancel', 'POST', CANCEL, 404, { code: 'not_found', sentMs: T0 + 30_000, receivedMs: T0 + 30_050 });
  expect(checksOf(checkHistory({ tasks: [read('get', 'req_get', 25, task('failed'))], answers: [notFound] }, CONTEXT))).toEqual(['tasks.cancel.terminal-conflict']);
});

it('observes every answer for these rules, its key named by a hash and never kept', () => {
  const observer = createObserver();
  const exchange = toExchange(
    { method: 'POST', path: '/v1/messages?beta=true', requestHeaders: { 'x-api-key': KEY, 'Content-Type': 'application/json' }, requestBody: 'not json' },
    { status: 401, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'req_x', 'retry-after': '3' }), text: '{"type":"error","error":{"type":"invalid_api_key","code":"invalid_api_key"}}' },
  );
  observer.exchange({ exchange, sentMs: 1, receivedMs: 2 });
  expect(observer.history.answers).toEqual([
    {
      requestId: 'req_x',
      method: 'POST',
      path: '/v1/messages',
      status: 401,
      code: 'invalid_api_key',
      headers: { retryAfter: '3', cacheControl: null, accelBuffering: null, contentType: 'application/json' },
      key: { id: keyName(KEY), via: 'x-api-key' },
      body: { kind: 'other' },
      sentMs: 1,
      receivedMs: 2,
    },
  ]);
  expect(JSON.stringify(observer.history)).not.toContain(KEY);
});

it('does not take a cancel’s own answer, stamped in the same millisecond as sent, for a read before it', () => {
  const cancel = answer('req_cancel', 'POST', CANCEL, 200, { sentMs: T0 + 30_000, receivedMs: T0 + 30_000 });
  const own = { ...read('cancel', 'req_cancel', 30, task('canceled')), receivedMs: T0 + 30_000 };
  expect(checkHistory({ tasks: [own], answers: [cancel] }, CONTEXT).filter((d) => d.check === 'tasks.cancel.terminal-conflict')).toEqual([]);
  // A cancel answered before it, in the same millisecond, is a read before it.
  const before = { ...read('cancel', 'req_first', 29, task('canceled')), receivedMs: T0 + 30_000 };
  expect(checksOf(checkHistory({ tasks: [before, own], answers: [cancel] }, CONTEXT))).toEqual(['tasks.cancel.terminal-conflict']);
});
