import { expect, it } from 'vitest';
import { checkHistory, createObserver } from '../../../src/observed/index.ts';
import { toExchange } from '../../../src/wire/index.ts';
import type { History, TaskObservation } from '../../../src/observed/index.ts';
import { at, checksOf, CONTEXT, KEY, page, read, refused, requestIdsOf, task, TASK_ID } from './histories.ts';

// The consequences of an answer held to what was observed after it (src/observed/consequences.ts): a refusal
// changes nothing (balance, tasks, list), a cancel answered 200 and a submission answered 200 are held to later reads.

const OTHER_ID = 'T261126100002XYZ999';
const NOTES = 'social-notes-data';
const sentAs = (input: Record<string, unknown>, metadata?: Record<string, string>): Pick<TaskObservation, 'sent'> => ({ sent: { model: NOTES, input, metadata } });
const firstInput = KEY.input;
const conflicting = { ...KEY.input, note: 'https://notes.example/n/2' };

const submit = read('submit', 'req_submit', 0, task('queued'), { key: KEY, ...sentAs(firstInput, { order: '42' }) });
/** The task another submission would have made of `conflicting`, created at 2 s. */
const hidden = task('queued', { id: OTHER_ID, created_at: at(2), input: conflicting, metadata: { order: '43' } });
const conflict = refused('submit', 'req_conflict', 2, 409, 'idempotency_conflict', { key: { ...KEY, input: conflicting }, ...sentAs(conflicting, { order: '43' }) });

it.each<[string, History, string, string[]]>([
  ['a 422 after which the balance dropped', { tasks: [refused('submit', 'req_a', 2, 422, 'invalid_params', { balance: { before: '960.000', after: '920.000' } })] }, 'billing.refusal.changes-nothing', ['req_a']],
  ['a 402 after which the balance dropped', { tasks: [refused('submit', 'req_a', 2, 402, 'key_quota_exceeded', { balance: { before: '960.000', after: '920.000' } })] }, 'billing.refusal.changes-nothing', ['req_a']],
  [
    'a refused cancel that refunded',
    { tasks: [submit, refused('cancel', 'req_a', 25, 409, 'task_not_cancelable', { target: TASK_ID, balance: { before: '960.000', after: '1000.000' } })] },
    'billing.refusal.changes-nothing',
    ['req_a'],
  ],
  ['a 409 idempotency_conflict with a task created behind it', { tasks: [submit, conflict], pages: [page('req_list', 5, [hidden, task('queued')])] }, 'tasks.refusal.creates-nothing', ['req_conflict', 'req_list']],
  [
    'a 429 with a task created behind it, found by its query',
    { tasks: [refused('submit', 'req_a', 2, 429, 'rate_limited', sentAs({ mode: 'note', note: 'https://notes.example/n/3' })), read('get', 'req_get', 4, task('queued', { id: OTHER_ID, created_at: at(2), input: { mode: 'note', note: 'https://notes.example/n/3', agree: true }, metadata: {} }), { target: OTHER_ID })] },
    'tasks.refusal.creates-nothing',
    ['req_a', 'req_get'],
  ],
  [
    'an idempotent replay that created a second task',
    { tasks: [submit, read('replay', 'req_replay', 2, task('queued'), { key: KEY, ...sentAs(firstInput, { order: '42' }) })], pages: [page('req_list', 5, [task('queued', { id: OTHER_ID, created_at: at(2) }), task('queued')])] },
    'tasks.refusal.creates-nothing',
    ['req_list', 'req_replay'],
  ],
  ['a 409 idempotency_conflict that overwrote the first task', { tasks: [submit, conflict, read('get', 'req_get', 3, task('queued', { input: conflicting }), { target: TASK_ID })] }, 'tasks.refusal.leaves-tasks', ['req_conflict', 'req_get', 'req_submit']],
  [
    'a 409 task_not_cancelable that canceled the task',
    { tasks: [submit, refused('cancel', 'req_cancel', 3, 409, 'task_not_cancelable', { target: TASK_ID }), read('get', 'req_get', 5, task('canceled', { finished_at: at(4) }), { target: TASK_ID })] },
    'tasks.refusal.leaves-tasks',
    ['req_cancel', 'req_get', 'req_submit'],
  ],
  ['a cancel answered 200 with the task still processing', { tasks: [submit, read('cancel', 'req_cancel', 6, task('processing'), { target: TASK_ID })] }, 'tasks.cancel.held-to-reads', ['req_cancel']],
  [
    'a cancel answered 200 with the task failed for another reason',
    { tasks: [submit, read('cancel', 'req_cancel', 21, task('canceled', { error: { code: 'generation_failed', message: 'failed' } }), { target: TASK_ID })] },
    'tasks.cancel.held-to-reads',
    ['req_cancel'],
  ],
  [
    'a task answered canceled missing from a first page of canceled tasks with more after it, newer than its oldest item',
    {
      tasks: [submit, read('cancel', 'req_cancel', 2, task('canceled', { finished_at: at(2) }), { target: TASK_ID })],
      pages: [page('req_list', 3, [task('canceled', { id: OTHER_ID, created_at: at(-10), finished_at: at(-5) })], { has_more: true, query: { limit: 1, page: 1, status: 'canceled' } })],
    },
    'tasks.cancel.held-to-reads',
    ['req_cancel', 'req_list'],
  ],
  ['a task answered to its submission and then not found', { tasks: [submit, refused('get', 'req_get', 3, 404, 'not_found', { target: TASK_ID })] }, 'tasks.submit.held-to-reads', ['req_get', 'req_submit']],
  ['a task missing from the last list page read after it', { tasks: [submit], pages: [page('req_list', 3, [task('queued', { id: OTHER_ID, created_at: at(-10) })])] }, 'tasks.submit.held-to-reads', ['req_list', 'req_submit']],
  [
    'a task missing from a first page with more after it, newer than its oldest item',
    { tasks: [submit], pages: [page('req_list', 3, [task('queued', { id: OTHER_ID, created_at: at(-10) })], { has_more: true, query: { limit: 1, page: 1 } })] },
    'tasks.submit.held-to-reads',
    ['req_list', 'req_submit'],
  ],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found), JSON.stringify(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('reports a cancel answered canceled while later reads show the task running on and charged, and the canceled tasks without it', () => {
  const cancel = read('cancel', 'req_cancel', 2, task('canceled', { finished_at: at(2) }), { target: TASK_ID });
  const canceledPage = page('req_canceled', 23, [], { query: { limit: 20, page: 1, status: 'canceled' } });
  const history: History = { tasks: [submit, cancel, read('get', 'req_running', 10, task('processing'), { target: TASK_ID }), read('get', 'req_charged', 22, task('succeeded'), { target: TASK_ID })], pages: [canceledPage] };
  const found = checkHistory(history, CONTEXT);
  // The lifecycle's own rule names the reads that went back; this one the cancel, by the list of canceled tasks.
  expect(checksOf(found).sort()).toEqual(['lifecycle.status.forward-only', 'tasks.cancel.held-to-reads']);
  expect(found.filter((d) => d.check === 'tasks.cancel.held-to-reads')).toEqual([
    {
      check: 'tasks.cancel.held-to-reads',
      message: `task ${TASK_ID} (created ${at(0)}) was answered canceled by its cancel (req_cancel) and is missing from the first page of canceled tasks read after it (req_canceled, the last page)`,
      requestIds: ['req_cancel', 'req_canceled'],
    },
  ]);
});

it('passes a history of refusals that changed nothing and of answers their later reads hold', () => {
  const owner = read('submit', 'req_owner', 0, task('queued'), { key: KEY, ...sentAs(firstInput, { order: '42' }), balance: { before: '1000.000', after: '960.000' } });
  const unchanged = { before: '960.000', after: '960.000' };
  const history: History = {
    tasks: [
      owner,
      refused('submit', 'req_model', 1, 404, 'model_unavailable', { sent: { model: 'svc-no-such-model', input: firstInput, metadata: {} }, balance: unchanged }),
      refused('submit', 'req_invalid', 1, 422, 'invalid_params', { ...sentAs({ mode: 'note', note: 'https://notes.example/n/1' }), balance: unchanged }),
      { ...conflict, balance: unchanged },
      read('replay', 'req_replay', 2, task('queued'), { key: KEY, ...sentAs(firstInput, { order: '42' }), balance: unchanged }),
      read('get', 'req_get', 3, task('queued'), { target: TASK_ID }),
      read('cancel', 'req_cancel', 4, task('canceled', { finished_at: at(4) }), { target: TASK_ID, balance: { before: '960.000', after: '1000.000' } }),
      refused('cancel', 'req_again', 5, 409, 'task_not_cancelable', { target: TASK_ID, balance: { before: '1000.000', after: '1000.000' } }),
      read('get', 'req_after', 6, task('canceled', { finished_at: at(4) }), { target: TASK_ID }),
      // Another task's query refused: nothing of this one.
      refused('get', 'req_unknown', 6, 404, 'not_found', { target: 'T000000000000AAAAAA' }),
    ],
    pages: [page('req_list', 7, [task('canceled', { finished_at: at(4) })]), page('req_canceled', 7, [task('canceled', { finished_at: at(4) })], { walk: 'w2', query: { limit: 20, page: 1, status: 'canceled' } })],
  };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it.each<[string, History]>([
  // Someone else's task: another note, or created long after the refusal, or read before it was sent.
  ['a task of other input created while a refusal was under way', { tasks: [submit, conflict], pages: [page('req_list', 5, [task('queued', { id: OTHER_ID, created_at: at(2), input: { ...conflicting, note: 'n/9' }, metadata: { order: '43' } }), task('queued')])] }],
  ['a task like the refused one created a minute later', { tasks: [submit, conflict], pages: [page('req_list', 70, [{ ...hidden, created_at: at(62) }, task('queued')])] }],
  ['a task like the refused one listed before it was sent', { tasks: [submit, conflict], pages: [page('req_before', 1.9, [{ ...hidden, created_at: at(1) }, task('queued')]), page('req_list', 5, [{ ...hidden, created_at: at(1) }, task('queued')], { walk: 'w2' })] }],
  ['a task older than every item of a first page with more after it', { tasks: [submit], pages: [page('req_list', 3, [task('queued', { id: OTHER_ID, created_at: at(1) })], { has_more: true, query: { limit: 1, page: 1 } })] }],
  ['a task missing from a page filtered by status', { tasks: [submit], pages: [page('req_list', 3, [], { query: { limit: 20, page: 1, status: 'succeeded' } })] }],
  [
    'a refused cancel of a task that a later accepted cancel canceled',
    { tasks: [submit, refused('cancel', 'req_refused', 3, 409, 'task_not_cancelable', { target: TASK_ID }), read('cancel', 'req_cancel', 4, task('canceled', { finished_at: at(4) }), { target: TASK_ID }), read('get', 'req_get', 5, task('canceled', { finished_at: at(4) }))] },
  ],
  ['a query sent while the cancel was under way showing the task queued', { tasks: [submit, read('cancel', 'req_cancel', 2, task('canceled', { finished_at: at(2) })), { ...read('get', 'req_get', 2, task('queued')), sentMs: Date.parse(at(2)) - 10 }] }],
])('passes %s', (_name, history) => {
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('is fed the task a refused query or cancel names and what a refused submission sent', () => {
  const observer = createObserver();
  const refusal = (status: number, code: string) => ({ status, headers: new Headers({ 'content-type': 'application/json' }), text: JSON.stringify({ error: { code } }) });
  const sent = { model: NOTES, params: { note: 'n' }, metadata: { order: '43' } };
  observer.exchange({ exchange: toExchange({ method: 'POST', path: '/v1/tasks', requestHeaders: {}, requestBody: JSON.stringify(sent) }, refusal(422, 'invalid_params')), sentMs: 0, receivedMs: 5 });
  observer.exchange({ exchange: toExchange({ method: 'GET', path: `/v1/tasks/${TASK_ID}`, requestHeaders: {}, requestBody: undefined }, refusal(404, 'not_found')), sentMs: 10, receivedMs: 15 });
  observer.exchange({ exchange: toExchange({ method: 'POST', path: `/v1/tasks/${TASK_ID}/cancel`, requestHeaders: {}, requestBody: undefined }, refusal(409, 'task_not_cancelable')), sentMs: 20, receivedMs: 25 });
  expect(observer.history.tasks?.map((t) => [t.kind, t.answer?.code, t.target, t.sent])).toEqual([
    ['submit', 'invalid_params', undefined, { model: NOTES, input: { note: 'n' }, metadata: { order: '43' } }],
    ['get', 'not_found', TASK_ID, undefined],
    ['cancel', 'task_not_cancelable', TASK_ID, undefined],
  ]);
});
