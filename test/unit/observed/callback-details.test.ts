import { createHmac } from 'node:crypto';
import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { CallbackObservation, History } from '../../../src/observed/index.ts';
import { callback, checksOf, CONTEXT, SECRET, T0, task } from './histories.ts';
import type { Json } from './histories.ts';

// The details of a callback request (src/observed/callbacks.ts) and the retry schedule (callback-retries.ts),
// each broken once by a history the rule must report; and what they must let pass.

/** A callback as `callback()` makes it, with its headers changed. */
const withHeaders = (headers: Record<string, string | undefined>, base = callback(task('succeeded'))): CallbackObservation => ({
  ...base,
  headers: Object.fromEntries(Object.entries({ ...base.headers, ...headers }).filter((e): e is [string, string] => e[1] !== undefined)),
});

/** A callback of exactly `body`, stamped `stamp` (as sent) and signed with SECRET over it, received at 21.2 s. */
function signed(body: string, stamp = String(Math.floor(T0 / 1000) + 21), id = 'msg_2kq8d6Wv1'): CallbackObservation {
  const key = Buffer.from(SECRET.replace(/^whsec_/, ''), 'base64');
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${stamp}.${body}`).digest('base64')}`;
  const base = callback(task('succeeded'));
  return { ...base, headers: { ...base.headers, 'webhook-id': id, 'webhook-timestamp': stamp, 'webhook-signature': signature }, body: body, receivedMs: T0 + 21_200 };
}

const envelope = (data: unknown): string => JSON.stringify({ type: 'task.succeeded', timestamp: '2026-11-26T10:00:20+08:00', data });

/** Deliveries of one message: each sent at `s` seconds after T0, answered `status`. */
const deliveries = (...attempts: [number, number][]): CallbackObservation[] => attempts.map(([s, status]) => ({ ...callback(task('succeeded'), { sentS: s }), answered: status }));

it.each<[string, History, string[]]>([
  ['a callback sent as text/plain', { callbacks: [withHeaders({ 'content-type': 'text/plain' })] }, ['callbacks.request.json']],
  ['a callback without Content-Type', { callbacks: [withHeaders({ 'content-type': undefined })] }, ['callbacks.request.json']],
  ['a body that is not JSON', { callbacks: [signed('type=task.succeeded&id=T261126100000ABC123')] }, ['callbacks.request.json']],
  ['a User-Agent of another sender', { callbacks: [withHeaders({ 'user-agent': 'node-fetch/1.0' })] }, ['callbacks.request.user-agent']],
  ['a callback without User-Agent', { callbacks: [withHeaders({ 'user-agent': undefined })] }, ['callbacks.request.user-agent']],
  // Signed over the stamp as sent: only the unit is wrong (and so it is not within 5 minutes of receipt).
  ['a webhook-timestamp in milliseconds', { callbacks: [signed(envelope(task('succeeded')), String(T0 + 21_000))] }, ['callbacks.timestamp.fresh', 'callbacks.timestamp.seconds']],
  ['data wrapping the task', { callbacks: [signed(envelope({ task: task('succeeded') }))] }, ['callbacks.data.task-object']],
  ['data without the task object’s metadata', { callbacks: [signed(envelope(withoutKey(task('succeeded'), 'metadata')))] }, ['callbacks.data.task-object']],
  ['data whose object is not task', { callbacks: [signed(envelope(task('succeeded', { object: 'callback' })))] }, ['callbacks.data.task-object']],
  ['a retry 10 s after a failed delivery', { callbacks: deliveries([21, 500], [31, 200]) }, ['callbacks.retry.schedule']],
  ['a second retry 1 minute (not 5) after the first', { callbacks: deliveries([21, 500], [81, 503], [141, 200]) }, ['callbacks.retry.schedule']],
  ['the 30-minute retry an hour late', { callbacks: deliveries([21, 500], [81, 500], [381, 500], [381 + 5400, 200]) }, ['callbacks.retry.schedule']],
  ['the 6-hour retry after 2 hours', { callbacks: deliveries([21, 500], [81, 500], [381, 500], [2181, 500], [9381, 500], [16581, 200]) }, ['callbacks.retry.schedule']],
])('reports %s', (_name, history, checks) => {
  expect(checksOf(checkHistory(history, CONTEXT))).toEqual(checks);
});

it('says which delivery came when, after which failure, against the documented delay', () => {
  const [found] = checkHistory({ callbacks: deliveries([21, 500], [81, 502], [141, 200]) }, CONTEXT);
  expect(found).toEqual({ check: 'callbacks.retry.schedule', message: 'callback msg_2kq8d6Wv1: delivery 3 came 60 s after delivery 2 failed (answered 502), documented: 300 s', requestIds: [] });
});

it('names the Content-Type, User-Agent and timestamp it found', () => {
  const found = checkHistory({ callbacks: [withHeaders({ 'content-type': 'text/plain', 'user-agent': 'Other/2' })] }, CONTEXT).map((d) => d.message);
  expect(found).toEqual(['callback msg_2kq8d6Wv1: User-Agent "Other/2", not Svc-Webhook/1.0', 'callback msg_2kq8d6Wv1: Content-Type "text/plain", not application/json']);
  const stamp = String(T0 + 21_000);
  expect(checkHistory({ callbacks: [signed(envelope(task('succeeded')), stamp)] }, CONTEXT).map((d) => d.message)).toContain(`callback msg_2kq8d6Wv1: webhook-timestamp "${stamp}" is not Unix seconds (milliseconds?)`);
});

// Each sound history beside its twin broken at the rule's edge: let pass, and reported once broken.
it.each<[string, History, History, string]>([
  [
    'every retry at its documented gap, the sixth attempt accepted',
    { callbacks: deliveries([21, 500], [81, 500], [381, 500], [2181, 500], [9381, 500], [30981, 200]) },
    { callbacks: deliveries([21, 500], [81, 500], [381, 500], [2181, 500], [9381, 500], [30981 - 3600, 200]) },
    'callbacks.retry.schedule',
  ],
  ['a retry a few seconds late (the receiver’s 10 s to answer)', { callbacks: deliveries([21, 500], [81 + 11, 200]) }, { callbacks: deliveries([21, 500], [81 + 20, 200]) }, 'callbacks.retry.schedule'],
  ['a repeat right after a failed delivery (a duplicate)', { callbacks: deliveries([21, 500], [21.5, 500], [81, 200]) }, { callbacks: deliveries([21, 500], [23, 500], [81, 200]) }, 'callbacks.retry.schedule'],
  ['a resend after a delivery was accepted', { callbacks: deliveries([21, 200], [31, 200]) }, { callbacks: deliveries([21, 500], [31, 200]) }, 'callbacks.retry.schedule'],
  [
    'a resend after the sixth attempt failed',
    { callbacks: deliveries([21, 500], [81, 500], [381, 500], [2181, 500], [9381, 500], [30981, 500], [31000, 200]) },
    { callbacks: deliveries([21, 500], [81, 500], [381, 500], [2181, 500], [9381, 500], [30981 - 3600, 500], [31000, 200]) },
    'callbacks.retry.schedule',
  ],
  [
    'repeats whose answers are not known',
    { callbacks: [callback(task('succeeded')), callback(task('succeeded'), { sentS: 25 })] },
    { callbacks: [{ ...callback(task('succeeded')), answered: 500 }, callback(task('succeeded'), { sentS: 25 })] },
    'callbacks.retry.schedule',
  ],
  ['application/json with a charset', { callbacks: [withHeaders({ 'content-type': 'application/json; charset=utf-8' })] }, { callbacks: [withHeaders({ 'content-type': 'text/json; charset=utf-8' })] }, 'callbacks.request.json'],
  [
    'a webhook.test event, which is no task',
    { callbacks: [signed(JSON.stringify({ type: 'webhook.test', timestamp: '2026-11-26T10:00:20+08:00', data: { message: 'hi', account_webhook: true } }))] },
    { callbacks: [withHeaders({ 'user-agent': 'curl/8.0' }, signed(JSON.stringify({ type: 'webhook.test', timestamp: '2026-11-26T10:00:20+08:00', data: { message: 'hi', account_webhook: true } })))] },
    'callbacks.request.user-agent',
  ],
])('lets pass %s, and reports its twin broken at the edge', (_name, sound, broken, check) => {
  expect(checkHistory(sound, CONTEXT)).toEqual([]);
  expect(checksOf(checkHistory(broken, CONTEXT))).toEqual([check]);
});

function withoutKey(data: Json, key: string): Json {
  const copy = { ...data };
  delete copy[key];
  return copy;
}
