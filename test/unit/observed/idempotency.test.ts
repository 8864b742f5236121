import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { at, checksOf, CONTEXT, KEY, read, refused, requestIdsOf, task } from './histories.ts';

const first = read('submit', 'req_first', 0, task('queued'), { key: KEY });
const other = { ...KEY, input: { ...KEY.input, note: 'https://notes.example/n/2' } };

it.each<[string, History, string, string[]]>([
  ['a replay answering another task', { tasks: [first, read('replay', 'req_a', 2, task('queued', { id: 'T261126100002XYZ999' }), { key: KEY })] }, 'tasks.idempotency.same-answer', ['req_a', 'req_first']],
  ['a second submission with the key creating a second task', { tasks: [first, read('submit', 'req_a', 2, task('queued', { id: 'T261126100002XYZ999', created_at: at(2) }), { key: KEY })] }, 'tasks.idempotency.same-answer', ['req_a', 'req_first']],
  ['a replay with other times than the first answer', { tasks: [first, read('replay', 'req_a', 2, task('queued', { created_at: at(1) }), { key: KEY })] }, 'tasks.idempotency.same-answer', ['req_a', 'req_first']],
  ['a replay with another freeze', { tasks: [first, read('replay', 'req_a', 2, task('queued', { points: { frozen: '50.000', charged: '0.000', refunded: '0.000' } }), { key: KEY })] }, 'tasks.idempotency.same-answer', ['req_a', 'req_first']],
  ['a replay neither as first answered nor as the task was read', { tasks: [first, read('get', 'req_get', 22, task('succeeded')), read('replay', 'req_a', 24, task('succeeded', { output: { text: 'other', files: [] } }), { key: KEY })] }, 'tasks.idempotency.same-answer', ['req_a', 'req_first']],
  ['a replay refused for want of points', { tasks: [first, refused('submit', 'req_a', 2, 402, 'insufficient_points', { key: KEY })] }, 'tasks.idempotency.same-answer', ['req_a', 'req_first']],
  ['the key with other input accepted', { tasks: [first, read('submit', 'req_a', 2, task('queued'), { key: other })] }, 'tasks.idempotency.conflict-refused', ['req_a', 'req_first']],
  ['the key with another model answered with another 409', { tasks: [first, refused('submit', 'req_a', 2, 409, 'task_not_cancelable', { key: { ...KEY, model: 'avatar-photo' } })] }, 'tasks.idempotency.conflict-refused', ['req_a', 'req_first']],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('accepts a replay showing the task as it is now', () => {
  const history: History = { tasks: [first, read('get', 'req_get', 22, task('succeeded')), read('replay', 'req_a', 24, task('succeeded'), { key: KEY })] };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('accepts a replay refused by a request limit', () => {
  expect(checkHistory({ tasks: [first, refused('submit', 'req_a', 2, 429, 'rate_limited', { key: KEY })] }, CONTEXT)).toEqual([]);
});

it('accepts the documented conflict, and a refusal before the key was first used', () => {
  const history: History = {
    tasks: [refused('submit', 'req_0', -1, 402, 'insufficient_points', { key: other }), first, refused('submit', 'req_a', 2, 409, 'idempotency_conflict', { key: other })],
  };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});
