import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History, ListPageObservation, TaskObservation } from '../../../src/observed/index.ts';
import { at, checksOf, CONTEXT, page, read, requestIdsOf, task } from './histories.ts';

// The order of list pages within one second: an emulator on a manual clock (or any fast client) creates many
// tasks in one second, whose created_at cannot tell them apart; the client's own order of submission can (one
// submission answered before the next was sent), and the list is newest first by creation.

/** Task n, submitted 1.n seconds after T0 (each answered before the next was sent), all created in that second. */
const nth = (n: number): Record<string, unknown> => task('succeeded', { id: `T26112610000${n}SAME0${n}`, created_at: at(1), started_at: at(1), finished_at: at(1) });
const submit = (n: number, s = 1 + n / 10, requestId = `req_submit${n}`): TaskObservation => read('submit', requestId, s, { ...nth(n), status: 'queued', started_at: null, finished_at: null, output: null, points: { frozen: '40.000', charged: '0.000', refunded: '0.000' } });
const submits = [1, 2, 3, 4, 5].map((n) => submit(n));
const p1 = (items: number[], extra: Partial<ListPageObservation> = {}): ListPageObservation => page('req_p1', 60, items.map(nth), { query: { limit: 2, page: 1 }, has_more: true, ...extra });
const p2 = (items: number[], extra: Partial<ListPageObservation> = {}): ListPageObservation => page('req_p2', 61, items.map(nth), { query: { limit: 2, page: 2 }, ...extra });

it.each<[string, History, string, string[]]>([
  ['an older task of the same second above a newer one', { tasks: submits.slice(0, 2), pages: [page('req_p1', 60, [nth(1), nth(2)])] }, 'tasks.list.newest-first.same-second', ['req_p1', 'req_submit1', 'req_submit2']],
  ['a second page holding a task newer than one of the first, in the same second', { tasks: submits.slice(1), pages: [p1([5, 3]), p2([4, 2])] }, 'tasks.list.newest-first.same-second', ['req_p1', 'req_p2', 'req_submit3', 'req_submit4']],
  ['a task skipped between two items of page 2', { tasks: submits, pages: [p1([5, 4]), p2([3, 1])] }, 'tasks.list.no-skip', ['req_p2', 'req_submit2']],
  ['a task skipped between the pages', { tasks: submits, pages: [p1([5, 4]), p2([2, 1])] }, 'tasks.list.no-skip', ['req_p1', 'req_p2', 'req_submit3']],
  ['a task missing after the last page', { tasks: submits, pages: [p1([5, 4]), p2([3, 2])] }, 'tasks.list.no-skip', ['req_p2', 'req_submit1']],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual([...requestIds].sort());
});

it.each<[string, History]>([
  ['a walk of the same second newest first by submission', { tasks: submits, pages: [p1([5, 4]), p2([3, 2, 1].slice(0, 2)), page('req_p3', 62, [nth(1)], { query: { limit: 2, page: 3 } })] }],
  ['tasks of the same second submitted at once, in either order', { tasks: [submit(1, 1.1, 'req_a'), { ...submit(2, 1.12, 'req_b'), sentMs: submit(1).sentMs }], pages: [page('req_p1', 60, [nth(1), nth(2)])] }],
  ['a skip between the pages when submits intervened', { tasks: submits, pages: [p1([5, 4]), p2([2, 1], { submitsIntervened: true })] }],
  ['a walk filtered by status (whose items may move out of it)', { tasks: submits, pages: [p1([5, 4], { query: { limit: 2, page: 1, status: 'succeeded' } }), p2([2, 1], { query: { limit: 2, page: 2, status: 'succeeded' } })] }],
  ['a task submitted after page 2 was read, missing from it', { tasks: [...submits.slice(0, 4), submit(5, 70, 'req_submit_late')], pages: [page('req_p1', 60, [nth(4), nth(3)], { query: { limit: 2, page: 1 }, has_more: true }), p2([2, 1])] }],
])('accepts %s', (_name, history) => {
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});
