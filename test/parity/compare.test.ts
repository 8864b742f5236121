import { expect, it } from 'vitest';
import { toExchange } from '../../src/wire/index.ts';
import { compareAnswers, endpointOf } from '../../src/parity/index.ts';
import { collapsed, eventName } from '../../src/parity/stream.ts';
import { serviceTimes } from '../../src/parity/timing.ts';
import type { HarEntry } from '../../src/recording/index.ts';

// The mask rules and the structural diff on answers made by hand: what is compared exactly, what on presence and
// type only. The wire (a recording replayed against an emulator) is in parity.test.ts.

const REQUEST_ID = `req_${'a'.repeat(24)}`;

function answer(body: unknown, options: { status?: number; headers?: Record<string, string>; stream?: boolean } = {}): ReturnType<typeof toExchange> {
  const headers = new Headers({ 'content-type': options.stream ? 'text/event-stream' : 'application/json', 'x-request-id': REQUEST_ID, ...options.headers });
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return toExchange({ method: 'GET', path: '/v1/x', requestHeaders: {}, requestBody: undefined }, { status: options.status ?? 200, headers, text });
}

/** What differed, as `check path` lines; nothing when every check agreed. */
function differing(recorded: ReturnType<typeof answer>, replayed: ReturnType<typeof answer>, redacted = false): string[] {
  return compareAnswers(recorded, replayed, { redacted, recordedBody: true, rewrite: (text) => text }).flatMap((o) => o.findings.map((f) => `${f.check} ${f.path}`));
}

it.each([
  ['a task id', { id: 'T261125063931PWGU5G' }, { id: 'T261125070000ABCDEF' }, []],
  ['an *_id', { item_id: 'msg_a1' }, { item_id: 'msg_b2' }, []],
  ['an id-shaped value under any key', { task: 'T261125063931PWGU5G' }, { task: 'T261125070000ABCDEF' }, []],
  ['times', { created_at: '2026-11-25T06:39:31+08:00', created: 1, timestamp: 'a' }, { created_at: '2026-11-25T07:00:00+08:00', created: 2, timestamp: 'b' }, []],
  ['generated text', { choices: [{ message: { content: 'one' }, delta: { content: 'a' } }], output: { text: 'x' } }, { choices: [{ message: { content: 'two' }, delta: { content: 'b' } }], output: { text: 'y' } }, []],
  ['tool arguments', { function: { name: 'f', arguments: '{"a":1}' } }, { function: { name: 'f', arguments: '{"a":2}' } }, []],
  ['error messages', { error: { code: 'not_found', message: 'a', details: [{ field: 'f', message: 'b' }] } }, { error: { code: 'not_found', message: 'c', details: [{ field: 'f', message: 'd' }] } }, []],
  ['usage', { usage: { prompt_tokens: 5, completion_tokens: 9 } }, { usage: { prompt_tokens: 6, completion_tokens: 3 } }, []],
  ['file addresses and sizes', { files: [{ url: 'https://a/1', cover_url: 'https://a/2', size: 10, width: 640 }] }, { files: [{ url: 'https://b/1', cover_url: 'https://b/2', size: 12, width: 640 }] }, []],
  ['a marker of a redacted secret', { webhook_url: 'https://hook?token=[redacted]' }, { webhook_url: 'https://hook?token=abc' }, []],
  ['an error code', { error: { code: 'not_found' } }, { error: { code: 'invalid_params' } }, ['parity.body.values $.error.code']],
  ['a task status', { status: 'processing' }, { status: 'queued' }, ['parity.body.values $.status']],
  ['points as strings', { points: { frozen: '40.000' } }, { points: { frozen: '40.00' } }, ['parity.body.values $.points.frozen']],
  ['points as a number', { points: { frozen: 40 } }, { points: { frozen: '40.000' } }, ['parity.body.shape $.points.frozen']],
  ['a model', { model: 'svc-text-pro-20261101' }, { model: 'svc-text-pro' }, ['parity.body.values $.model']],
  ['a model’s id, a code and not generated', { object: 'model', id: 'svc-text-pro' }, { object: 'model', id: 'svc-text-max' }, ['parity.body.values $.id']],
  ['a finish reason', { choices: [{ finish_reason: 'stop' }] }, { choices: [{ finish_reason: 'length' }] }, ['parity.body.values $.choices[0].finish_reason']],
  ['a masked value of another type', { started_at: null }, { started_at: '2026-11-25T06:39:31+08:00' }, ['parity.body.shape $.started_at']],
  ['a field on one side only', { output: null }, { output: null, extra: 1 }, ['parity.body.shape $.extra']],
  ['an array of another length', { data: [{ id: 'a1' }, { id: 'b2' }] }, { data: [{ id: 'c3' }] }, ['parity.body.shape $.data']],
])('%s', (_name, recorded, replayed, expected) => {
  expect(differing(answer(recorded), answer(replayed))).toEqual(expected);
});

it('x-ed out text is masked only where the recording says it redacted content', () => {
  const [recorded, replayed] = [answer({ input: { note: 'xxxxx xxxx' } }), answer({ input: { note: 'https://n/1 abc' } })];
  expect(differing(recorded, replayed, true)).toEqual([]);
  expect(differing(recorded, replayed, false)).toEqual(['parity.body.values $.input.note']);
});

it('compares status, the media type, the request id form and a stream’s headers', () => {
  const recorded = answer('data: [DONE]\n\n', { stream: true, headers: { 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' } });
  const replayed = answer('data: [DONE]\n\n', { status: 201, stream: true, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-transform, no-cache', 'x-request-id': 'abc' } });
  expect(differing(recorded, replayed)).toEqual(['parity.status status', 'parity.headers.request-id headers.x-request-id', 'parity.headers.stream headers.x-accel-buffering']);
});

it('names chat chunks by what they carry and collapses runs of one delta event', () => {
  const chunk = (delta: object, extra: object = {}): { event: null; data: string } => ({ event: null, data: JSON.stringify({ object: 'chat.completion.chunk', choices: [{ delta, finish_reason: null, ...extra }] }) });
  const events = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'a' }), chunk({ content: 'b' }), chunk({ content: 'c' }, { finish_reason: 'stop' }), { event: null, data: '[DONE]' }];
  expect(collapsed(events).map((e) => e.name)).toEqual(['chat.completion.chunk[role,content]', 'chat.completion.chunk[content]', 'chat.completion.chunk[content,finish_reason]', '[DONE]']);
  expect(eventName({ event: 'message_delta', data: '{"type":"message_delta"}' })).toBe('message_delta');
  expect(eventName({ event: null, data: '{"type":"response.output_text.delta"}' })).toBe('response.output_text.delta');
  expect(eventName({ event: null, data: '{"error":{"code":"service_unavailable"}}' })).toBe('error');
});

it.each([
  ['GET', '/v1/tasks/T261125063931PWGU5G', 'GET /v1/tasks/{id}'],
  ['POST', '/v1/tasks/T261125063931PWGU5G/cancel', 'POST /v1/tasks/{id}/cancel'],
  ['GET', '/v1/tasks?limit=2', 'GET /v1/tasks'],
  ['GET', '/v1/models/svc-text-pro', 'GET /v1/models/{id}'],
  ['post', '/v1/chat/completions', 'POST /v1/chat/completions'],
])('the endpoint of %s %s is %s', (method, path, endpoint) => {
  expect(endpointOf(method, path)).toBe(endpoint);
});

/** An entry with what serviceTimes reads: when it started, and the answer's body. */
const entry = (startedMs: number, body: unknown = {}): HarEntry =>
  ({ startedDateTime: new Date(startedMs).toISOString(), response: { content: { mimeType: 'application/json', text: JSON.stringify(body) } } }) as HarEntry;
const steps = (times: number[]): number[] => times.slice(1).map((t, i) => t - (times[i] ?? 0));

it('times a real-time service by the machine’s steps, lifted where an answer shows a later time', () => {
  const t = Date.parse('2026-11-25T06:00:00Z');
  const entries = [entry(t, { created_at: '2026-11-25T14:00:00+08:00' }), entry(t + 5_000), entry(t + 65_000), entry(t + 66_000, { finished_at: '2026-11-25T14:01:07+08:00' })];
  expect(steps(serviceTimes(entries))).toEqual([5_000, 60_000, 2_000]);
});

it('times a real-time service by when its answers came, so a submission that waited to be handled does not push a later poll past the task’s end', () => {
  // Recorded against a 3 s task (1 s queued, 2 s processing) on a busy machine: the submission waited 300 ms before
  // the service created the task; the last poll was answered 2,900 ms after that, still processing.
  const t = Date.parse('2026-11-25T06:00:00.200Z');
  const timed = (startedMs: number, waitMs: number, body: unknown): HarEntry => ({ ...entry(startedMs, body), timings: { send: 0, wait: waitMs, receive: 1 } }) as HarEntry;
  const created = '2026-11-25T14:00:00+08:00';
  const entries = [
    timed(t, 300, { status: 'queued', created_at: created }),
    timed(t + 300 + 2_895, 5, { status: 'processing', created_at: created, started_at: '2026-11-25T14:00:01+08:00' }),
    timed(t + 300 + 3_595, 5, { status: 'succeeded', created_at: created, started_at: '2026-11-25T14:00:01+08:00', finished_at: '2026-11-25T14:00:03+08:00' }),
  ];
  const times = serviceTimes(entries);
  // Timed by the requests' starts, the poll came 3,195 ms after the submission: a replay there sees `succeeded`.
  expect(steps(times)).toEqual([2_900, 700]);
  expect((times[1] ?? 0) - (times[0] ?? 0)).toBeLessThan(3_000);
});

it('replays a poll answered `processing` after its task was due to finish (the service\'s timer was late) before the recorded finish', () => {
  // A 3 s task on a busy machine: the finish was due 3,000 ms after creation, but the poll answered 3,050 ms after
  // it still showed `processing` (the timer had not fired). Timed by the machine, the replay polled at 3,050 ms:
  // past the imported scenario's 3 s, so the emulator answered `succeeded`.
  const t = Date.parse('2026-11-25T06:00:00.200Z');
  const at = (startedMs: number, method: string, path: string, body: unknown): HarEntry =>
    ({ ...entry(startedMs, body), request: { method, url: `http://service.test${path}` }, timings: { send: 0, wait: 5, receive: 1 } }) as HarEntry;
  const task = { id: 'T1', object: 'task', created_at: '2026-11-25T14:00:00+08:00' };
  const started = { ...task, status: 'processing', started_at: '2026-11-25T14:00:01+08:00', finished_at: null };
  const entries = [
    at(t, 'POST', '/v1/tasks', { ...task, status: 'queued', started_at: null, finished_at: null }),
    at(t + 1_500, 'GET', '/v1/tasks/T1', started),
    at(t + 3_050, 'GET', '/v1/tasks/T1', started),
    at(t + 3_600, 'GET', '/v1/tasks/T1', { ...started, status: 'succeeded', finished_at: '2026-11-25T14:00:03+08:00' }),
  ];
  const since = serviceTimes(entries).map((ms, _, all) => ms - (all[0] ?? 0));
  expect(since).toEqual([0, 1_500, 2_999, 3_600]);
});

it('replays an answer that shows a task\'s change no earlier than the change, counted from the task\'s submission', () => {
  // The submission was answered late (its answer's first byte 800 ms after the task was created): by the machine,
  // the poll that shows the task started came 700 ms after it, though the task objects say one second.
  const t = Date.parse('2026-11-25T06:00:00.100Z');
  const at = (startedMs: number, waitMs: number, method: string, body: unknown): HarEntry =>
    ({ ...entry(startedMs, body), request: { method, url: 'http://service.test/v1/tasks' }, timings: { send: 0, wait: waitMs, receive: 1 } }) as HarEntry;
  const task = { id: 'T2', object: 'task', created_at: '2026-11-25T14:00:00+08:00', finished_at: null };
  const entries = [
    at(t, 800, 'POST', { ...task, status: 'queued', started_at: null }),
    at(t + 1_500, 0, 'GET', { object: 'list', data: [{ ...task, status: 'processing', started_at: '2026-11-25T14:00:01+08:00' }] }),
  ];
  const times = serviceTimes(entries);
  expect((times[1] ?? 0) - (times[0] ?? 0)).toBe(1_000);
});

it('times an emulator whose clock was moved by hand by the times its answers show, whatever the machine’s steps', () => {
  const t = Date.parse('2026-11-25T06:00:00Z');
  const entries = [
    entry(t, { created_at: '2026-11-25T14:00:00+08:00' }),
    entry(t + 10, { status: 'queued', created_at: '2026-11-25T14:00:00+08:00' }),
    entry(t + 20, { started_at: '2026-11-25T14:00:01+08:00' }),
    entry(t + 900, { status: 'processing' }),
    entry(t + 950, { finished_at: '2026-11-25T14:00:09+08:00', expires_at: '2026-12-25T14:00:09+08:00' }),
  ];
  expect(steps(serviceTimes(entries))).toEqual([0, 1_000, 0, 8_000]);
});

it('one side refused what the other answered: the status and one difference saying what each side said, not one per missing field', () => {
  const task = { id: 'T261125063931PWGU5G', object: 'task', status: 'queued', points: { frozen: '40.000' }, created_at: '2026-11-25T06:39:31+08:00' };
  const refusal = { error: { code: 'invalid_params', message: 'webhook_url: must be https', request_id: REQUEST_ID } };
  const outcomes = compareAnswers(answer(task), answer(refusal, { status: 422 }), { redacted: false, recordedBody: true, rewrite: (text) => text });
  const findings = outcomes.flatMap((o) => o.findings);
  expect(findings.map((f) => `${f.check} ${f.path}`)).toEqual(['parity.status status', 'parity.body.shape $']);
  expect(findings[1]).toMatchObject({ recorded: '{id, object, status, points, created_at}', replayed: 'error invalid_params: webhook_url: must be https' });
  // Two refusals with different statuses are still compared field by field: their bodies are the same kind of answer.
  expect(differing(answer(refusal, { status: 400 }), answer(refusal, { status: 422 }))).toEqual(['parity.status status']);
});
