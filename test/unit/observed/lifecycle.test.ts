import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { at, checksOf, CONTEXT, read, requestIdsOf, task } from './histories.ts';

const submit = read('submit', 'req_submit', 0, task('queued'));

it.each<[string, History, string, string[]]>([
  ['a task read processing after it was read succeeded', { tasks: [submit, read('get', 'req_a', 22, task('succeeded')), read('get', 'req_b', 30, task('processing'))] }, 'lifecycle.status.forward-only', ['req_a', 'req_b']],
  ['a task read queued after it was read processing', { tasks: [submit, read('get', 'req_a', 13, task('processing', { started_at: at(12) })), read('get', 'req_b', 13.5, task('queued'))] }, 'lifecycle.status.forward-only', ['req_a', 'req_b']],
  ['a finished task seen in two terminal states', { tasks: [submit, read('get', 'req_a', 22, task('succeeded')), read('get', 'req_b', 25, task('failed'))] }, 'lifecycle.status.forward-only', ['req_a', 'req_b']],
  ['a terminal task whose output changed', { tasks: [submit, read('get', 'req_a', 22, task('succeeded')), read('get', 'req_b', 25, task('succeeded', { output: { text: 'other', files: [] } }))] }, 'lifecycle.terminal.unchanged', ['req_a', 'req_b']],
  ['a terminal task whose finished_at changed', { tasks: [submit, read('get', 'req_a', 22, task('failed')), read('get', 'req_b', 25, task('failed', { finished_at: at(21) }))] }, 'lifecycle.terminal.unchanged', ['req_a', 'req_b']],
  ['created_at that changed between reads', { tasks: [submit, read('get', 'req_a', 3, task('queued', { created_at: at(1) }))] }, 'lifecycle.created-at.unchanged', ['req_a', 'req_submit']],
  ['finished_at before started_at', { tasks: [read('get', 'req_a', 22, task('succeeded', { started_at: at(21) }))] }, 'lifecycle.times.ordered', ['req_a']],
  ['started_at set while queued', { tasks: [read('get', 'req_a', 3, task('queued', { started_at: at(2) }))] }, 'lifecycle.times.started', ['req_a']],
  ['started_at null while processing', { tasks: [read('get', 'req_a', 10, task('processing', { started_at: null }))] }, 'lifecycle.times.started', ['req_a']],
  ['started_at that moved once set', { tasks: [read('get', 'req_a', 10, task('processing')), read('get', 'req_b', 12, task('processing', { started_at: at(6) }))] }, 'lifecycle.times.started', ['req_a', 'req_b']],
  ['finished_at set on a processing task', { tasks: [read('get', 'req_a', 10, task('processing', { finished_at: at(9) }))] }, 'lifecycle.times.finished', ['req_a']],
  ['finished_at null on a failed task', { tasks: [read('get', 'req_a', 22, task('failed', { finished_at: null }))] }, 'lifecycle.times.finished', ['req_a']],
  ['output on a failed task', { tasks: [read('get', 'req_a', 22, task('failed', { output: { text: 'x', files: [] } }))] }, 'lifecycle.output.success-only', ['req_a']],
  ['no output on a succeeded task', { tasks: [read('get', 'req_a', 22, task('succeeded', { output: null }))] }, 'lifecycle.output.success-only', ['req_a']],
  ['an error on a succeeded task', { tasks: [read('get', 'req_a', 22, task('succeeded', { error: { code: 'timeout', message: 'late' } }))] }, 'lifecycle.error.failure-only', ['req_a']],
  ['no error on a canceled task', { tasks: [read('cancel', 'req_a', 2, task('canceled', { error: null }))] }, 'lifecycle.error.failure-only', ['req_a']],
  ['a read queued well after its started_at', { tasks: [read('get', 'req_a', 10, task('processing')), read('get', 'req_b', 8, task('queued'))] }, 'lifecycle.read.after-start', ['req_a', 'req_b']],
  ['a time in UTC', { tasks: [read('get', 'req_a', 3, task('queued', { created_at: '2026-11-26T02:00:00Z' }))] }, 'wire.time.beijing', ['req_a']],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('allows two reads that overlapped in time to see the task in either order', () => {
  const processing = { ...read('get', 'req_a', 10, task('processing')), receivedMs: read('get', '', 12, null).receivedMs };
  const queuedMeanwhile = read('get', 'req_b', 11, task('queued', { started_at: null }));
  expect(checkHistory({ tasks: [processing, queuedMeanwhile] }, { ...CONTEXT, clockSkewMs: 60_000 })).toEqual([]);
});

it('accepts a task failed or canceled straight from the queue with no started_at', () => {
  const history: History = {
    tasks: [submit, read('get', 'req_a', 3, task('queued')), read('cancel', 'req_b', 4, task('canceled', { finished_at: at(4) })), read('get', 'req_c', 6, task('canceled', { finished_at: at(4) }))],
  };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('names the task and both requests in a going back', () => {
  const [found] = checkHistory({ tasks: [read('get', 'req_a', 22, task('succeeded')), read('get', 'req_b', 30, task('processing'))] });
  expect(found?.message).toBe('task T261126100000ABC123 was succeeded (req_a) and then processing (req_b)');
});
