import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History, OtherAccount } from '../../../src/observed/index.ts';
import { checksOf, CONTEXT, page, read, refused, requestIdsOf, task } from './histories.ts';

// tasks.isolation.observed: a task created through one account's key is never seen through another account's.
// Either history may hold the creation: the proxy gives each account the others' submissions, the suite gives its
// account its second key's reads.

const submitted = read('submit', 'req_submit', 0, task('queued'));
const theirs = (patch: Partial<OtherAccount>): OtherAccount => ({ account: 'key_other', ...patch });

it.each<[string, History, string[]]>([
  ['a task the other account created, read 200 through this one', { tasks: [read('get', 'req_get', 5, task('processing'))], others: [theirs({ tasks: [submitted] })] }, ['req_submit', 'req_get']],
  ['a task the other account created, listed through this one', { pages: [page('req_list', 5, [task('queued')])], others: [theirs({ tasks: [submitted] })] }, ['req_submit', 'req_list']],
  ['a task the other account created, canceled through this one', { tasks: [read('cancel', 'req_cancel', 5, task('canceled'))], others: [theirs({ tasks: [submitted] })] }, ['req_submit', 'req_cancel']],
  ['a task this account created, read 200 through the other', { tasks: [submitted], others: [theirs({ tasks: [read('get', 'req_other_get', 5, task('queued'))] })] }, ['req_submit', 'req_other_get']],
  ['a task this account created, listed through the other', { tasks: [submitted], others: [theirs({ pages: [page('req_other_list', 5, [task('queued')])] })] }, ['req_submit', 'req_other_list']],
  [
    'a task the other account created, answered as a replay to this one',
    { tasks: [read('replay', 'req_replay', 5, task('queued'))], others: [theirs({ tasks: [submitted] })] },
    ['req_submit', 'req_replay'],
  ],
])('reports %s', (_name, history, requestIds) => {
  const found = checkHistory(history, CONTEXT).filter((d) => d.check === 'tasks.isolation.observed');
  expect(found).toHaveLength(1);
  expect(requestIdsOf(found)).toEqual([...requestIds].sort());
  expect(found[0]?.message).toContain('key_other');
});

it.each<[string, History]>([
  ['a task the other account created, refused 404 through this one', { tasks: [refused('get', 'req_get', 5, 404, 'not_found')], others: [theirs({ tasks: [submitted] })] }],
  ['reads of the account’s own task, another account beside it', { tasks: [submitted, read('get', 'req_get', 5, task('processing'))], others: [theirs({ tasks: [read('submit', 'req_theirs', 1, task('queued', { id: 'T261126100001ZZZ999' }))] })] }],
  ['a read of a task no known account created', { tasks: [read('get', 'req_get', 5, task('processing'))], others: [theirs({ tasks: [] })] }],
  ['the same reads with no other account known', { tasks: [read('get', 'req_get', 5, task('processing'))] }],
  ['a refused submission of the other account', { tasks: [read('get', 'req_get', 5, task('processing'))], others: [theirs({ tasks: [refused('submit', 'req_submit', 0, 422, 'invalid_params')] })] }],
])('accepts %s', (_name, history) => {
  expect(checksOf(checkHistory(history, CONTEXT))).not.toContain('tasks.isolation.observed');
});
