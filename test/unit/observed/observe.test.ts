import { expect, it } from 'vitest';
import { createObserver } from '../../../src/observed/index.ts';
import { toExchange } from '../../../src/wire/index.ts';
import { task } from './histories.ts';

// The feeder: what a client saw on the wire, turned into the history the checker judges.

const json = (body: unknown, extra: Record<string, string> = {}): { status: number; headers: Headers; text: string } => ({
  status: 200,
  headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'req_1', ...extra }),
  text: JSON.stringify(body),
});
const sent = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => ({ method, path, requestHeaders: headers, requestBody: body === undefined ? undefined : JSON.stringify(body) });
const at = (exchange: ReturnType<typeof toExchange>, ms: number) => ({ exchange, sentMs: ms, receivedMs: ms + 5 });

it('tells submissions, replays, reads and cancels apart, with the key and what was sent under it', () => {
  const observer = createObserver();
  const body = { model: 'social-notes-data', input: { note: 'n', agree: true } };
  observer.exchange(at(toExchange(sent('POST', '/v1/tasks', body, { 'Idempotency-Key': 'k1' }), json(task('queued'))), 0));
  observer.exchange(at(toExchange(sent('POST', '/v1/tasks', body, { 'idempotency-key': 'k1' }), json(task('queued'), { 'idempotent-replayed': 'true' })), 10));
  observer.exchange(at(toExchange(sent('GET', '/v1/tasks/T1'), json(task('processing'))), 20));
  observer.exchange(at(toExchange(sent('POST', '/v1/tasks/T1/cancel'), { ...json({ error: { code: 'task_not_cancelable' } }), status: 409 }), 30));
  observer.exchange(at(toExchange(sent('GET', '/v1/models'), json({ data: [] })), 40));
  const tasks = observer.history.tasks ?? [];
  expect(tasks.map((t) => t.kind)).toEqual(['submit', 'replay', 'get', 'cancel']);
  expect(tasks[0]?.key).toEqual({ idempotencyKey: 'k1', model: 'social-notes-data', input: { note: 'n', agree: true } });
  expect(tasks[1]?.key?.idempotencyKey).toBe('k1');
  expect(tasks[3]).toMatchObject({ task: null, answer: { status: 409, code: 'task_not_cancelable' } });
});

it('groups list pages into walks, and says when a submission came between two pages of one', () => {
  const observer = createObserver();
  const page = (query: string, ms: number): void => void observer.exchange(at(toExchange(sent('GET', `/v1/tasks?${query}`), json({ data: [task('queued')], has_more: true })), ms));
  page('limit=1&status=queued', 0);
  page('status=queued&limit=1&page=2', 10);
  observer.exchange(at(toExchange(sent('POST', '/v1/tasks', { model: 'm', input: {} }), json(task('queued'))), 15));
  page('limit=1&status=queued&page=3', 20);
  page('limit=1&status=queued', 30);
  const pages = observer.history.pages ?? [];
  expect(pages.map((p) => [p.query.page, p.query.limit, p.query.status, p.submitsIntervened ?? false])).toEqual([
    [1, 1, 'queued', false],
    [2, 1, 'queued', false],
    [3, 1, 'queued', true],
    [1, 1, 'queued', false],
  ]);
  expect(new Set(pages.slice(0, 3).map((p) => p.walk)).size).toBe(1);
  expect(pages[3]?.walk).not.toBe(pages[0]?.walk);
});

it('reads a text call whole or as its stream, with the maximum asked for and whether the prompt had text', () => {
  const observer = createObserver();
  const chat = { model: 'svc-text-lite', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] };
  observer.exchange(at(toExchange(sent('POST', '/v1/chat/completions', chat), json({ id: 'svcchat_1' })), 0));
  const stream = 'data: {"id":"svcchat_2"}\n\ndata: [DONE]\n\n';
  observer.exchange(at(toExchange(sent('POST', '/v1/messages', { max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'text', text: ' ' }] }] }), { status: 200, headers: new Headers({ 'content-type': 'text/event-stream' }), text: stream }), 10));
  expect(observer.history.texts).toEqual([
    { requestId: 'req_1', format: 'chat', maxTokens: 8, promptNonEmpty: true, request: expect.any(String) as unknown, streamed: false, body: { id: 'svcchat_1' } },
    { requestId: null, format: 'messages', maxTokens: 4, promptNonEmpty: false, request: expect.any(String) as unknown, streamed: true, events: [{ id: 'svcchat_2' }] },
  ]);
});
