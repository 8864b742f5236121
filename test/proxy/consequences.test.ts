import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { startProxy as startDeviating } from '../conformance/deviating.ts';
import type { Deviation as Deviating } from '../conformance/deviating.ts';
import { closedAfterEach, startProxy } from '../support/proxy.ts';

// The consequences of an answer judged by the checking proxy from what it relays alone (no balance: it reads none):
// in front of a deployment whose cancel and whose idempotency conflict say one thing while later reads show another.

const ADMIN = 'consequences-admin';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/proxy-consequences', agree: true } };
const closing = closedAfterEach();
let emulator: Emulator;
let direct: string;
let key: string;

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  direct = await emulator.listen(0);
  const account = await control('/_emulator/accounts', { points: '1000.000' });
  key = String((await control(`/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
});
afterEach(() => emulator.close());

async function control(path: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${direct}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

/** The checking proxy in front of the emulator behind `deviation`; its clock is the emulator's, as it can read it. */
async function proxied(deviation: Deviating): Promise<{ call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Record<string, unknown>>; found: () => Promise<string[]> }> {
  const upstream = await startDeviating(direct, deviation);
  closing.push(upstream);
  const wallStart = performance.now();
  const { proxy, url } = await startProxy(upstream.url, closing, [], { deploymentNow: () => emulator.clock.now() + (performance.now() - wallStart) / 1000 });
  return {
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${url}${path}`, { method, headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return (await res.json()) as Record<string, unknown>;
    },
    async found() {
      await proxy.settled();
      return [...new Set(proxy.deviations().map((d) => d.check))].sort();
    },
  };
}

it('flags a cancel answered canceled while the task runs on, and passes the same traffic in front of the emulator as it is', async () => {
  const faked = new Set<string>();
  const fake: Deviating = {
    request(req) {
      const id = /^\/v1\/tasks\/(\w+)\/cancel$/.exec(req.path)?.[1];
      return id && faked.has(id) ? { ...req, method: 'GET', path: `/v1/tasks/${id}`, body: '' } : undefined;
    },
    answer(answer, req) {
      const id = /^\/v1\/tasks\/(\w+)\/cancel$/.exec(req.path)?.[1];
      if (!id || !faked.has(id)) return undefined;
      const task = JSON.parse(answer.body) as Record<string, unknown> & { points: Record<string, string> };
      Object.assign(task, { status: 'canceled', finished_at: task['created_at'], error: { code: 'canceled', message: 'Canceled.' }, points: { ...task.points, refunded: task.points['frozen'] } });
      return { ...answer, body: JSON.stringify(task) };
    },
  };
  for (const deviating of [false, true]) {
    const { call, found } = await proxied(fake);
    const id = String((await call('POST', '/v1/tasks', NOTES))['id']);
    if (deviating) faked.add(id);
    expect((await call('POST', `/v1/tasks/${id}/cancel`))['status']).toBe('canceled');
    await control('/_emulator/clock/advance', { seconds: 10 });
    const read = await call('GET', `/v1/tasks/${id}`);
    expect(read['status']).toBe(deviating ? 'succeeded' : 'canceled');
    await call('GET', '/v1/tasks?status=canceled');
    // The lifecycle's rule names the reads that went back; the consequence rule the cancel the canceled tasks lack.
    expect(await found()).toEqual(deviating ? ['lifecycle.status.forward-only', 'tasks.cancel.held-to-reads'] : []);
  }
});

it('flags a 409 idempotency_conflict with a task created behind it, once the list shows that task', async () => {
  const { call, found } = await proxied({
    request(req) {
      if (req.method !== 'POST' || req.path !== '/v1/tasks' || !req.body.includes('conflicting')) return undefined;
      return { ...req, headers: Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'idempotency-key')) };
    },
    answer(answer, req) {
      if (req.method !== 'POST' || req.path !== '/v1/tasks' || !req.body.includes('conflicting') || answer.status !== 200) return undefined;
      const requestId = answer.headers['x-request-id'] ?? '';
      return { ...answer, status: 409, body: JSON.stringify({ error: { code: 'idempotency_conflict', message: 'The key was used with other parameters.', request_id: requestId } }) };
    },
  });
  const headers = { 'Idempotency-Key': 'proxy-consequences-1', 'X-Emulator-Scenario': 'timeout-in-queue' };
  await call('GET', '/v1/tasks');
  await call('POST', '/v1/tasks', NOTES, headers);
  const refused = await call('POST', '/v1/tasks', { ...NOTES, input: { ...NOTES.input, note: 'https://notes.example.com/n/conflicting' } }, headers);
  expect((refused['error'] as { code?: string } | undefined)?.code).toBe('idempotency_conflict');
  expect(await found()).toEqual([]);
  await call('GET', '/v1/tasks');
  expect(await found()).toEqual(['tasks.refusal.creates-nothing']);
});
