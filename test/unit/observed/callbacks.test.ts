import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { at, callback, checksOf, CONTEXT, read, requestIdsOf, SECRET, task } from './histories.ts';

const done = read('get', 'req_done', 22, task('succeeded'));

it.each<[string, History, string, string[]]>([
  ['a callback for a processing task', { callbacks: [callback(task('processing'), { type: 'task.succeeded' })] }, 'callbacks.terminal.only', []],
  ['a callback typed for another status', { callbacks: [callback(task('failed'), { type: 'task.succeeded' })] }, 'callbacks.terminal.only', []],
  ['two webhook-ids for one task', { tasks: [done], callbacks: [callback(task('succeeded')), callback(task('succeeded'), { id: 'msg_other', sentS: 81 })] }, 'callbacks.once-per-task', []],
  ['a body changed after signing', { callbacks: [callback(task('succeeded'), { tamper: true })] }, 'callbacks.signature.verifies', []],
  ['a signature under another secret', { callbacks: [{ ...callback(task('succeeded')), secrets: [`whsec_${Buffer.from('another-secret-of-this-account').toString('base64')}`] }] }, 'callbacks.signature.verifies', []],
  ['a webhook-timestamp six minutes old', { callbacks: [callback(task('succeeded'), { sentS: 21, receivedS: 21 + 360 })] }, 'callbacks.timestamp.fresh', []],
  ['an envelope timestamp before the task finished', { callbacks: [callback(task('succeeded'), { timestamp: at(19) })] }, 'callbacks.envelope.after-finish', []],
  ['data unlike the task as GET shows it', { tasks: [done], callbacks: [callback(task('succeeded', { points: { frozen: '40.000', charged: '40.000', refunded: '0.000' }, metadata: {} }))] }, 'callbacks.data.as-get', ['req_done']],
  ['a GET after the callback still processing', { tasks: [read('get', 'req_late', 21.5, task('processing'))], callbacks: [callback(task('succeeded'), { receivedS: 21.2 })] }, 'callbacks.get.terminal-on-arrival', ['req_late']],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('accepts retries of one callback under one webhook-id, with a rotated secret among the keys', () => {
  const retry = callback(task('succeeded'), { sentS: 81 });
  const history: History = { tasks: [done], callbacks: [callback(task('succeeded')), { ...retry, secrets: ['whsec_b2xkLXNlY3JldA==', SECRET] }] };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});

it('names the webhook-id in its messages', () => {
  const [found] = checkHistory({ callbacks: [callback(task('succeeded'), { tamper: true })] });
  expect(found?.message).toBe('callback msg_2kq8d6Wv1: no signature verifies with the account secret over the bytes received');
});

it("judges webhook-timestamp against the receiver's own clock when the deployment's was fast-forwarded", () => {
  // Received an hour later on the emulator's clock (advanced by the suite), a second later on the receiver's.
  const sent = callback(task('succeeded'), { sentS: 21, receivedS: 21 + 3600 });
  const wall = Number(sent.headers['webhook-timestamp']) * 1000 + 1000;
  expect(checksOf(checkHistory({ tasks: [done], callbacks: [{ ...sent, receivedWallMs: wall }] }, CONTEXT))).toEqual([]);
  expect(checksOf(checkHistory({ tasks: [done], callbacks: [{ ...sent, receivedWallMs: wall + 360_000 }] }, CONTEXT))).toEqual(['callbacks.timestamp.fresh']);
});
