import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import type { Deviation as Found } from '../../src/proxy/index.ts';
import { editJson, isJson, KEY, startProxy as startDeviant, tasksOf } from '../conformance/deviating.ts';
import type { Deviation } from '../conformance/deviating.ts';
import { closedAfterEach, startProxy } from '../support/proxy.ts';

// The rules of the paths the suite did not walk before, judged by the checking proxy on a client's own traffic: in
// front of a deviating upstream (the conformance harness's small proxy before a real emulator) the proxy reports a
// result video without its cover and a default list page of 10; in front of the emulator as it is, neither.

const ADMIN = 'paths-admin';
const RULES = ['files.result.record-fields', 'files.result.text-only-empty', 'tasks.list.full-page'];
const VIDEO = { model: 'video-gen-2.0-fast', input: { prompt: 'a paper boat', resolution: '480p', duration: 4 } };
const NOTES = { model: 'social-notes-data', input: { note: 'https://notes.example.com/n/paths', agree: true } };

let emulator: Emulator;
let direct: string;
const closing = closedAfterEach();

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  direct = await emulator.listen(0);
});
afterEach(() => emulator.close());

/** The checking proxy in front of the emulator, through a deviating upstream when one is given. */
async function proxied(deviation: Deviation | null): Promise<{ url: string; found: () => Promise<Found[]> }> {
  let upstream = direct;
  if (deviation) {
    const deviant = await startDeviant(direct, deviation);
    closing.push(deviant);
    upstream = deviant.url;
  }
  const { proxy, url } = await startProxy(upstream, closing, [], { deploymentNow: () => emulator.clock.now() });
  return {
    url,
    found: async () => {
      await proxy.settled();
      return proxy.deviations().filter((d) => RULES.includes(d.check));
    },
  };
}

async function api(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const all: Record<string, string> = { Authorization: `Bearer ${KEY}`, ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  const res = await fetch(`${url}${path}`, { method, headers: all, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect(res.status, `${method} ${path}`).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** A client's traffic: a video and a notes task run to success and read, then the default page of the account's 21 tasks. */
async function traffic(url: string): Promise<void> {
  const instant = { 'X-Emulator-Scenario': 'instant' };
  const video = await api(url, 'POST', '/v1/tasks', VIDEO, instant);
  const notes = await api(url, 'POST', '/v1/tasks', NOTES, instant);
  await fetch(`${direct}/_emulator/clock/advance`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ seconds: 3 }) });
  for (const task of [video, notes]) expect((await api(url, 'GET', `/v1/tasks/${String(task['id'])}`))['status']).toBe('succeeded');
  for (let i = 0; i < 19; i += 1) await api(url, 'POST', '/v1/tasks', NOTES, { 'X-Emulator-Scenario': 'timeout-in-queue' });
  await api(url, 'GET', '/v1/tasks');
}

it('reports neither rule on the emulator’s own traffic', async () => {
  const { url, found } = await proxied(null);
  await traffic(url);
  expect(await found()).toEqual([]);
});

it('reports a succeeded video whose record has no cover, and a default page of 10 that has more', async () => {
  const { url, found } = await proxied({
    request(req) {
      // A deployment whose default page size is 10.
      return req.method === 'GET' && req.path === '/v1/tasks' ? { ...req, path: '/v1/tasks?limit=10' } : undefined;
    },
    answer(answer, req) {
      if (req.method !== 'GET' || !/^\/v1\/tasks\/T\w+$/.test(req.path) || !isJson(answer)) return undefined;
      return editJson(answer, (body) => {
        for (const task of tasksOf(body)) {
          const files = (task['output'] as { files?: Record<string, unknown>[] } | null)?.files ?? [];
          if (task['model'] === 'video-gen-2.0-fast') for (const record of files) record['cover_url'] = null;
        }
      });
    },
  });
  await traffic(url);
  const deviations = await found();
  expect(deviations.map((d) => [d.check, d.method, d.path.replace(/T\w+$/, 'T…')])).toEqual([
    ['files.result.record-fields', 'GET', '/v1/tasks/T…'],
    ['tasks.list.full-page', 'GET', '/v1/tasks'],
  ]);
  expect(deviations[0]?.message).toMatch(/cover_url is null, expected the cover image address/);
  expect(deviations[1]?.message).toMatch(/^page 1 \(req_\w+\) holds 10 items and has_more, its limit is 20$/);
});
