import { createServer } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';

// The shared checker's task rules across exchanges, as the proxy feeds it: against answers a conforming service
// may give, and a read that went back although it ended first.

const ADMIN = 'task-order-admin';
const REQUEST_ID = 'req_cccccccccccccccccccccccc';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/rules', agree: true } };

let emulator: Emulator;
let direct: string;
let key: string;
const closing = closedAfterEach();

async function control(path: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${direct}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

async function api(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const all: Record<string, string> = { Authorization: `Bearer ${key}`, ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  const res = await fetch(`${base}${path}`, { method, headers: all, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  direct = await emulator.listen(0);
  const account = await control('/_emulator/accounts', { points: '1000.000' });
  key = String((await control(`/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
});
afterAll(() => emulator.close());

it('takes no order from an idempotent replay, which may answer the task as it was first answered', async () => {
  // A service that replays the first answer as it was (queued), after the task has finished.
  const submitted = await api(direct, 'POST', '/v1/tasks', NOTES, { 'Idempotency-Key': 'rules-replay-1' });
  expect(submitted.status).toBe(200);
  const id = String(submitted.body['id']);
  await control('/_emulator/clock/advance', { seconds: 20 });
  const finished = await api(direct, 'GET', `/v1/tasks/${id}`);
  expect(finished.body['status']).toBe('succeeded');
  const server = createServer((req, res) => {
    req.resume();
    const replay = req.method === 'POST';
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID, ...(replay ? { 'Idempotent-Replayed': 'true' } : {}) });
    res.end(JSON.stringify(replay ? submitted.body : finished.body));
  });
  const upstream = await listenLocal(server, closing);

  const { proxy, url } = await startProxy(upstream, closing);
  expect((await api(url, 'GET', `/v1/tasks/${id}`)).body['status']).toBe('succeeded');
  const replayed = await api(url, 'POST', '/v1/tasks', NOTES, { 'Idempotency-Key': 'rules-replay-1' });
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body['status']).toBe('queued');
  // Still remembered as succeeded: a later read going back is still one.
  expect((await api(url, 'GET', `/v1/tasks/${id}`)).body['status']).toBe('succeeded');
  await proxy.settled();
  expect(proxy.deviations().filter((d) => d.check === 'lifecycle.status.forward-only')).toEqual([]);
});

it('in front of the emulator: an idempotent replay of a finished task deviates in nothing', async () => {
  const { proxy, url, lines } = await startProxy(direct, closing);
  const first = await api(url, 'POST', '/v1/tasks', NOTES, { 'Idempotency-Key': 'rules-replay-2' });
  await control('/_emulator/clock/advance', { seconds: 20 });
  expect((await api(url, 'GET', `/v1/tasks/${String(first.body['id'])}`)).body['status']).toBe('succeeded');
  const replayed = await api(url, 'POST', '/v1/tasks', NOTES, { 'Idempotency-Key': 'rules-replay-2' });
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body['id']).toBe(first.body['id']);
  await proxy.settled();
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
});

it('finds a task gone back when the earlier state comes from a read that started later but ended first', async () => {
  const submitted = await api(direct, 'POST', '/v1/tasks', NOTES);
  const id = String(submitted.body['id']);
  await control('/_emulator/clock/advance', { seconds: 3 });
  const processing = await api(direct, 'GET', `/v1/tasks/${id}`);
  await control('/_emulator/clock/advance', { seconds: 20 });
  const succeeded = await api(direct, 'GET', `/v1/tasks/${id}`);
  expect([processing.body['status'], succeeded.body['status']]).toEqual(['processing', 'succeeded']);
  // The first read answers succeeded at once but ends its body only when told; the second, which starts after
  // that answer began, answers processing: the task went back, though the second read ends first.
  let finish: () => void = () => undefined;
  let served = 0;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID });
    served += 1;
    if (served === 1) {
      const text = JSON.stringify(succeeded.body);
      res.write(text.slice(0, 10));
      finish = () => res.end(text.slice(10));
    } else {
      res.end(JSON.stringify(served === 2 ? processing.body : succeeded.body));
    }
  });
  const upstream = await listenLocal(server, closing);
  const { proxy, url } = await startProxy(upstream, closing);

  const slow = await fetch(`${url}/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${key}` } });
  expect(slow.status).toBe(200);
  expect((await api(url, 'GET', `/v1/tasks/${id}`)).body['status']).toBe('processing');
  await proxy.settled();
  finish();
  expect(((await slow.json()) as { status: string }).status).toBe('succeeded');
  await proxy.settled();
  expect(proxy.deviations().map((d) => `${d.check}: ${d.message}`)).toEqual([
    `lifecycle.status.forward-only: task ${id} was succeeded (${REQUEST_ID}) and then processing (${REQUEST_ID})`,
  ]);
});
