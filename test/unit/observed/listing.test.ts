import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { at, checksOf, CONTEXT, page, read, requestIdsOf, task } from './histories.ts';

/** Task n of a walk, created n seconds after T0, done. */
const nth = (n: number, patch: Record<string, unknown> = {}): Record<string, unknown> =>
  task('succeeded', { id: `T2611261000${String(n).padStart(2, '0')}ABC123`, created_at: at(n), started_at: at(n), finished_at: at(n + 1), ...patch });
const page2 = (requestId: string, items: unknown[], extra: Parameters<typeof page>[3] = {}): ReturnType<typeof page> =>
  page(requestId, 61, items, { query: { limit: 2, page: 2 }, ...extra });
const page1 = (items: unknown[]): ReturnType<typeof page> => page('req_p1', 60, items, { query: { limit: 2, page: 1 }, has_more: true });

it.each<[string, History, string, string[]]>([
  ['a page longer than its limit', { pages: [page('req_p1', 60, [nth(3), nth(2), nth(1)], { query: { limit: 2, page: 1 }, has_more: true })] }, 'tasks.list.limit', ['req_p1']],
  ['an older task above a newer one', { pages: [page('req_p1', 60, [nth(1), nth(2)])] }, 'tasks.list.newest-first', ['req_p1']],
  ['a second page newer than the first', { pages: [page1([nth(4), nth(3)]), page2('req_p2', [nth(5)])] }, 'tasks.list.newest-first', ['req_p1', 'req_p2']],
  ['an item of another status than the filter', { pages: [page('req_p1', 60, [nth(2)], { query: { limit: 20, page: 1, status: 'failed' } })] }, 'tasks.list.filter', ['req_p1']],
  ['an item of another model than the filter', { pages: [page('req_p1', 60, [nth(2)], { query: { limit: 20, page: 1, model: 'avatar-photo' } })] }, 'tasks.list.filter', ['req_p1']],
  ['a task on two pages of a walk', { pages: [page1([nth(4), nth(3)]), page2('req_p2', [nth(3), nth(2)])] }, 'tasks.list.no-repeat', ['req_p1', 'req_p2']],
  ['a known task missing between two pages', { tasks: [read('get', 'req_get', 40, nth(3))], pages: [page1([nth(5), nth(4)]), page2('req_p2', [nth(2), nth(1)])] }, 'tasks.list.no-gap', ['req_get', 'req_p1', 'req_p2']],
  ['an item unlike GET in the same status', { tasks: [read('get', 'req_get', 40, nth(3))], pages: [page('req_p1', 60, [nth(3, { metadata: {} })])] }, 'tasks.list.item-as-get', ['req_get', 'req_p1']],
  ['a known task missing after the last page', { tasks: [read('get', 'req_get', 40, nth(1))], pages: [page1([nth(5), nth(4)]), page2('req_p2', [nth(3)])] }, 'tasks.list.no-gap', ['req_get', 'req_p2']],
  ['a known task missing from a single page', { tasks: [read('get', 'req_get', 40, nth(1))], pages: [page('req_p1', 60, [nth(2)])] }, 'tasks.list.no-gap', ['req_get', 'req_p1']],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('accepts a walk of two pages with ties in created_at in any id order', () => {
  const history: History = { tasks: [read('get', 'req_get', 40, nth(3))], pages: [page1([nth(5), nth(4, { id: 'T261126100004AAA000' })]), page2('req_p2', [nth(4), nth(3)])] };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('accepts a repeat across pages when submits intervened', () => {
  const history: History = { pages: [page1([nth(4), nth(3)]), page2('req_p2', [nth(3), nth(2)], { submitsIntervened: true })] };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('accepts an item that moved forward since a GET', () => {
  const history: History = {
    tasks: [read('get', 'req_get', 10, task('processing'))],
    pages: [page('req_p1', 30, [task('succeeded')])],
  };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

// "Before the walk" is the client's: a server clock that stalls (an emulator's manual clock) or lags stamps a task
// submitted after the walk with a created_at older than the walk's items, and that task had no place in it.
it('accepts a task submitted after the walk whose created_at the server dated before the walk', () => {
  const history: History = { tasks: [read('get', 'req_late', 70, nth(1))], pages: [page1([nth(5), nth(4)]), page2('req_p2', [nth(3)])] };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

