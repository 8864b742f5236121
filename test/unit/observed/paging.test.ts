import { expect, it } from 'vitest';
import { checkHistory, createObserver } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { toExchange } from '../../../src/wire/index.ts';
import { at, checksOf, CONTEXT, page, requestIdsOf, task } from './histories.ts';

// Pages are `limit` tasks at a time: one that says more follow holds a whole page.

const nth = (n: number): Record<string, unknown> =>
  task('succeeded', { id: `T2611261000${String(n).padStart(2, '0')}ABC123`, created_at: at(100 - n), started_at: at(100 - n), finished_at: at(101 - n) });
const tasks = (count: number, from = 1): Record<string, unknown>[] => Array.from({ length: count }, (_, i) => nth(from + i));

it.each<[string, History]>([
  ['a default page of 10 that has more', { pages: [page('req_p1', 60, tasks(10), { has_more: true })] }],
  ['a page of limit 5 holding 4 that has more', { pages: [page('req_p1', 60, tasks(4), { query: { limit: 5, page: 1 }, has_more: true })] }],
])('reports %s', (_name, history) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual(['tasks.list.full-page']);
  expect(requestIdsOf(found)).toEqual(['req_p1']);
});

it('accepts whole pages with more to come, and a short last page', () => {
  const history: History = {
    pages: [page('req_p1', 60, tasks(20), { has_more: true }), page('req_p2', 61, tasks(3, 21), { query: { limit: 20, page: 2 } })],
  };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('takes a page whose query sends no limit as the default 20, from what the client sent', () => {
  const observer = createObserver();
  const answer = { status: 200, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'req_p1' }), text: JSON.stringify({ object: 'list', data: tasks(10), page: 1, limit: 10, has_more: true }) };
  observer.exchange({ exchange: toExchange({ method: 'GET', path: '/v1/tasks', requestHeaders: {}, requestBody: undefined }, answer), sentMs: 0, receivedMs: 5 });
  expect(checksOf(checkHistory(observer.history, CONTEXT))).toEqual(['tasks.list.full-page']);
});
