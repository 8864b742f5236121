import { createServer } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDEMPOTENCY_CHECKS } from '../../src/observed/idempotency.ts';
import { LIFECYCLE_CHECKS } from '../../src/observed/lifecycle.ts';
import { LISTING_CHECKS } from '../../src/observed/listing.ts';
import { POINTS_CHECKS } from '../../src/observed/points.ts';
import { TEXT_CHECKS } from '../../src/observed/text.ts';
import { closedAfterEach, startProxy } from '../support/proxy.ts';

// One deliberately wrong answer per group of the shared checker's rules (src/observed), through the proxy: each is
// reported under the rule's check id, naming the requests it rests on. Callbacks have their own file (relay).

const REQUEST_ID = 'req_eeeeeeeeeeeeeeeeeeeeeeee';
const KEY = 'sk-observed-groups';
const T0 = Date.now();

const beijing = (ms: number): string => `${new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;

type Status = 'queued' | 'processing' | 'succeeded';

/** A social-notes-data task created now, consistent in itself; `points` overrides its points. */
function task(id: string, status: Status, points?: Record<string, string>, input: Record<string, unknown> = { mode: 'note', note: 'https://notes.example.com/n/1', agree: true }): Record<string, unknown> {
  return {
    id,
    object: 'task',
    model: 'social-notes-data',
    status,
    created_at: beijing(T0),
    started_at: status === 'queued' ? null : beijing(T0 + 1000),
    finished_at: status === 'succeeded' ? beijing(T0 + 2000) : null,
    input,
    points: points ?? { frozen: '40.000', charged: status === 'succeeded' ? '40.000' : '0.000', refunded: '0.000' },
    output: status === 'succeeded' ? { text: 'note details', files: [] } : null,
    error: null,
    metadata: {},
  };
}

/** What each route answers, in turn (the last again once they run out). */
const ANSWERS: Record<string, unknown[]> = {
  // Lifecycle: finished, then processing again.
  'GET /v1/tasks/T261126100000BACK01': [task('T261126100000BACK01', 'succeeded'), task('T261126100000BACK01', 'processing')],
  // Points: a success charged 30 where the model's price is 40 (the rest refunded, so it adds up).
  'GET /v1/tasks/T261126100000CHEAP1': [task('T261126100000CHEAP1', 'succeeded', { frozen: '40.000', charged: '30.000', refunded: '10.000' })],
  // Idempotency: the same key with another input creates a task instead of 409 idempotency_conflict.
  'POST /v1/tasks': [task('T261126100000IDEM01', 'queued'), task('T261126100000IDEM02', 'queued', undefined, { mode: 'note', note: 'https://notes.example.com/n/2', agree: true })],
  // Listing: two items on a page of one.
  'GET /v1/tasks?limit=1': [{ object: 'list', data: [task('T261126100000LIST02', 'queued'), task('T261126100000LIST01', 'queued')], page: 1, limit: 1, has_more: false }],
  // Text: a total that is not input + output.
  'POST /v1/chat/completions': [
    {
      id: 'svcchat_groups1',
      object: 'chat.completion',
      created: Math.floor(T0 / 1000),
      model: 'svc-text-lite',
      choices: [{ index: 0, message: { role: 'assistant', content: 'A plan.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 9 },
    },
  ],
};

let server: Server;
let upstream: string;
const served = new Map<string, number>();
const running = closedAfterEach();

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const route = `${req.method} ${req.url}`;
      const answers = ANSWERS[route] ?? [];
      const n = served.get(route) ?? 0;
      served.set(route, n + 1);
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID }).end(JSON.stringify(answers[Math.min(n, answers.length - 1)] ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const NOTE = (n: number): string => JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${n}`, agree: true } });

it.each<[string, [string, string, string?, Record<string, string>?][], string]>([
  ['a task that goes back', [['GET', '/v1/tasks/T261126100000BACK01'], ['GET', '/v1/tasks/T261126100000BACK01']], LIFECYCLE_CHECKS.forwardOnly.id],
  ['a success charged less than its price', [['GET', '/v1/tasks/T261126100000CHEAP1']], POINTS_CHECKS.price.id],
  [
    'a key reused with another input and accepted',
    [
      ['POST', '/v1/tasks', NOTE(1), { 'Idempotency-Key': 'groups-1' }],
      ['POST', '/v1/tasks', NOTE(2), { 'Idempotency-Key': 'groups-1' }],
    ],
    IDEMPOTENCY_CHECKS.conflict.id,
  ],
  ['a page over its limit', [['GET', '/v1/tasks?limit=1']], LISTING_CHECKS.limit.id],
  ['a text usage that does not add up', [['POST', '/v1/chat/completions', JSON.stringify({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Plan?' }] })]], TEXT_CHECKS.usage.id],
])('reports %s under its check id', async (_name, requests, check) => {
  served.clear();
  const { proxy, url } = await startProxy(upstream, running);
  for (const [method, path, body, headers] of requests) {
    const res = await fetch(`${url}${path}`, { method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', ...headers }, ...(body ? { body } : {}) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }
  await proxy.settled();
  const found = proxy.deviations().filter((d) => !d.check.startsWith('wire.'));
  expect(found.map((d) => d.check)).toEqual([check]);
  const [last] = requests.slice(-1);
  expect(found[0]).toMatchObject({ method: last?.[0], path: last?.[1], request_id: REQUEST_ID, request_ids: [REQUEST_ID] });
  // The curl line asks the upstream again, without the key.
  expect(found[0]?.curl).toContain(`${upstream}${last?.[1] ?? ''}`);
  expect(found[0]?.curl).not.toContain(KEY);
});
