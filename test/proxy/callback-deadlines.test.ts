import { expect, it } from 'vitest';
import { createCallbackDeadlines } from '../../src/proxy/callback-deadlines.ts';
import { toExchange } from '../../src/wire/index.ts';
import type { Exchange } from '../../src/wire/index.ts';

// The relayed callbacks' deadline, as the proxy keeps it: once a read showed a relayed task terminal, its callback
// must come within the window of the deployment's clock, after a grace of real time.

const WINDOW = 60_000;
const GRACE = 1000;

const answer = (method: string, path: string, body: unknown, headers: Record<string, string> = {}): Exchange =>
  toExchange({ method, path, requestHeaders: {}, requestBody: undefined }, { status: 200, headers: new Headers({ 'content-type': 'application/json', ...headers }), text: JSON.stringify(body) });
const submit = (id: string, headers: Record<string, string> = {}): Exchange => answer('POST', '/v1/tasks', { id, status: 'queued' }, headers);
const read = (id: string, status: string): Exchange => answer('GET', `/v1/tasks/${id}`, { id, status });
const callbackOf = (id: string): Buffer => Buffer.from(JSON.stringify({ type: 'task.succeeded', timestamp: 'x', data: { id, status: 'succeeded' } }));

it('holds a relayed task read terminal to the window of the deployment’s clock, after the grace of real time', () => {
  const deadlines = createCallbackDeadlines({ windowMs: WINDOW, graceMs: GRACE });
  deadlines.exchange(submit('T1'), true, 0, 0);
  deadlines.exchange(read('T1', 'processing'), false, 1000, 10);
  expect(deadlines.overdue(WINDOW + 5000, 5000)).toEqual([]);
  deadlines.exchange(read('T1', 'succeeded'), false, 2000, 20);
  // At the window's end, not past it; past it, but within the grace of real time; then overdue, once.
  expect(deadlines.overdue(2000 + WINDOW, 5000)).toEqual([]);
  expect(deadlines.overdue(2000 + WINDOW + 1, 500)).toEqual([]);
  expect(deadlines.graceLeft(2000 + WINDOW + 1, 500)).toBe(520);
  expect(deadlines.overdue(2000 + WINDOW + 1, 1020).map((o) => [o.taskId, o.status, o.seenMs, o.seen.path])).toEqual([['T1', 'succeeded', 2000, '/v1/tasks/T1']]);
  expect(deadlines.overdue(10 * WINDOW, 99_999)).toEqual([]);
});

it('waits for nothing once the callback came, before or after the read, nor for a task not relayed or only replayed', () => {
  const deadlines = createCallbackDeadlines({ windowMs: WINDOW, graceMs: GRACE });
  deadlines.exchange(submit('T_came'), true, 0, 0);
  deadlines.exchange(read('T_came', 'succeeded'), false, 1000, 10);
  deadlines.arrived(callbackOf('T_came'));
  // The callback came before the submission's answer was checked (its check waits on clocks).
  deadlines.arrived(callbackOf('T_early'));
  deadlines.exchange(submit('T_early'), true, 0, 0);
  deadlines.exchange(read('T_early', 'failed'), false, 1000, 10);
  deadlines.exchange(submit('T_direct'), false, 0, 0);
  deadlines.exchange(read('T_direct', 'canceled'), false, 1000, 10);
  deadlines.exchange(submit('T_replayed', { 'idempotent-replayed': 'true' }), true, 0, 0);
  deadlines.exchange(answer('GET', '/v1/tasks?limit=20', { object: 'list', data: [{ id: 'T_replayed', status: 'succeeded' }] }), false, 1000, 10);
  expect(deadlines.overdue(10 * WINDOW, 99_999)).toEqual([]);
  expect(deadlines.waiting()).toBe(0);
});

it('takes a list item or a cancel’s answer as the read that showed the task terminal', () => {
  const deadlines = createCallbackDeadlines({ windowMs: WINDOW, graceMs: GRACE });
  deadlines.exchange(submit('T_listed'), true, 0, 0);
  deadlines.exchange(submit('T_canceled'), true, 0, 0);
  deadlines.exchange(answer('GET', '/v1/tasks?limit=2', { object: 'list', data: [{ id: 'T_listed', status: 'succeeded' }] }), false, 1000, 10);
  deadlines.exchange(answer('POST', '/v1/tasks/T_canceled/cancel', { id: 'T_canceled', status: 'canceled' }), false, 1000, 10);
  expect(deadlines.waiting()).toBe(2);
  expect(deadlines.overdue(1000 + WINDOW + 1, 5000).map((o) => `${o.taskId} ${o.seen.method} ${o.seen.path}`)).toEqual(['T_listed GET /v1/tasks?limit=2', 'T_canceled POST /v1/tasks/T_canceled/cancel']);
});
