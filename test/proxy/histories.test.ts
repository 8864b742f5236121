import { expect, it } from 'vitest';
import { createHistories } from '../../src/proxy/histories.ts';
import { toExchange } from '../../src/wire/index.ts';
import type { TimedExchange } from '../../src/observed/index.ts';
import type { Status } from '../../src/observed/task-view.ts';
import { task as observedTask } from '../unit/observed/histories.ts';

// The proxy's feed of the shared checker: one history per account, judged after each exchange, each deviation
// said once, and memory bounded by forgetting the oldest accounts and observations.

/** A task of the observed checker's hand-made histories, with its own id. */
const task = (id: string, status: Status): Record<string, unknown> => ({ ...observedTask(status), id });

/** A GET of a task in `status`, sent at `sentMs` and answered at `receivedMs` (machine ms far before the task's times). */
function read(id: string, status: Status, sentMs: number, receivedMs: number, requestId = `req_${id.slice(-6).toLowerCase()}`): TimedExchange {
  const exchange = toExchange(
    { method: 'GET', path: `/v1/tasks/${id}`, requestHeaders: {}, requestBody: undefined },
    { status: 200, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': requestId }), text: JSON.stringify(task(id, status)) },
  );
  return { exchange, sentMs, receivedMs };
}

const checks = (found: { check: string }[]): string[] => found.map((d) => d.check);

it('judges reads that overlapped as in either order, and a read after both answers as after them', () => {
  const histories = createHistories(() => ({}));
  expect(histories.exchange('a', read('T261126100000OVER01', 'processing', 100, 200))).toEqual([]);
  // Started before the first answer came: either may have read first.
  expect(histories.exchange('a', read('T261126100000OVER01', 'queued', 150, 210))).toEqual([]);
  expect(checks(histories.exchange('a', read('T261126100000OVER01', 'queued', 220, 230)))).toEqual(['lifecycle.status.forward-only']);
  // Two terminal states are never one task's, whatever the order.
  expect(histories.exchange('a', read('T261126100000OVER02', 'succeeded', 300, 400))).toEqual([]);
  expect(checks(histories.exchange('a', read('T261126100000OVER02', 'canceled', 310, 410)))).toEqual(['lifecycle.status.forward-only']);
});

it('says each deviation once, and keeps the accounts apart', () => {
  const histories = createHistories(() => ({}));
  histories.exchange('a', read('T261126100000ONCE01', 'succeeded', 100, 110));
  expect(checks(histories.exchange('a', read('T261126100000ONCE01', 'processing', 200, 210)))).toEqual(['lifecycle.status.forward-only']);
  // The same two reads are still in the history: nothing new to say.
  expect(histories.exchange('a', read('T261126100000ONCE01', 'succeeded', 300, 310))).toEqual([]);
  // Another account's read of the same id is another history.
  expect(histories.exchange('b', read('T261126100000ONCE01', 'processing', 400, 410))).toEqual([]);
});

it('forgets the account seen least recently beyond its cap', () => {
  const histories = createHistories(() => ({}), { accounts: 2, observations: 100 });
  histories.exchange('a', read('T261126100000ACCT01', 'succeeded', 100, 110));
  histories.exchange('b', read('T261126100000ACCT02', 'succeeded', 100, 110));
  histories.exchange('a', read('T261126100000ACCT03', 'succeeded', 120, 130));
  histories.exchange('c', read('T261126100000ACCT04', 'succeeded', 100, 110));
  // b was seen least recently: forgotten; a is still followed.
  expect(checks(histories.exchange('a', read('T261126100000ACCT01', 'processing', 200, 210)))).toEqual(['lifecycle.status.forward-only']);
  expect(histories.exchange('b', read('T261126100000ACCT02', 'processing', 200, 210))).toEqual([]);
});

it('judges at least the newest `observations` of an account and forgets older ones a generation at a time', () => {
  const histories = createHistories(() => ({}), { accounts: 10, observations: 2 });
  for (const [i, id] of ['T261126100000KEEP01', 'T261126100000KEEP02', 'T261126100000KEEP03', 'T261126100000KEEP04'].entries()) {
    expect(histories.exchange('a', read(id, 'succeeded', 100 + i, 101 + i))).toEqual([]);
  }
  // The first two went with the older generation; the last two are kept.
  expect(histories.exchange('a', read('T261126100000KEEP01', 'processing', 200, 210))).toEqual([]);
  expect(checks(histories.exchange('a', read('T261126100000KEEP04', 'processing', 220, 230)))).toEqual(['lifecycle.status.forward-only']);
});

it('judges nothing for an exchange the checker does not read', () => {
  let judged = 0;
  const histories = createHistories(() => {
    judged += 1;
    return {};
  });
  const models = toExchange({ method: 'GET', path: '/v1/models', requestHeaders: {}, requestBody: undefined }, { status: 200, headers: new Headers({ 'content-type': 'application/json' }), text: '{"object":"list","data":[]}' });
  expect(histories.exchange('a', { exchange: models, sentMs: 1, receivedMs: 2 })).toEqual([]);
  expect(judged).toBe(0);
});
