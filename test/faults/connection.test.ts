import Big from 'big.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NOTES, openWorld, TEXT } from './world.ts';
import type { World } from './world.ts';
import { rawEvents } from '../support/raw-events.ts';

// Faults on the connection of a /v1 request: a reset without any answer, latency before the answer or between a
// stream's events, a stream cut short, an answer trickled. Latencies are real milliseconds, measured as such.

let w: World;
beforeAll(async () => {
  w = await openWorld();
});
afterAll(() => w.emulator.close());

const chat = { model: TEXT, messages: [{ role: 'user' as const, content: 'tell me a story' }] };

it('resets the connection after the request was read: the openai SDK sees a connection error and nothing is created', async () => {
  const { id, key } = await w.newAccount();
  await w.faults([{ match: { method: 'POST' }, fault: { kind: 'reset' }, times: 2 }]);
  const client = new OpenAI({ apiKey: key, baseURL: `${w.base}/v1`, maxRetries: 0 });
  const failed = await client.chat.completions.create(chat).catch((e: unknown) => e);
  expect(failed).toBeInstanceOf(OpenAI.APIConnectionError);
  await expect(w.api(key, 'POST', '/v1/tasks', NOTES)).rejects.toThrow('fetch failed');

  expect(await w.tasks(id)).toEqual([]);
  expect((await w.ledger(id)).map((e) => e.kind)).toEqual(['fund']);
  // Each request is recorded (once its connection closed), marked as the rule's reset.
  await expect.poll(async () => (await w.records(key)).length).toBe(2);
  const records = await w.records(key);
  expect(records.map((r) => [r.path, r.injected_fault])).toEqual([
    ['/v1/chat/completions', { rule: 'fault_1', kind: 'reset' }],
    ['/v1/tasks', { rule: 'fault_1', kind: 'reset' }],
  ]);
  expect(records[1]?.model).toBe('social-notes-data');
  // The rule is used up: the next submission is the service's.
  expect((await w.api(key, 'POST', '/v1/tasks', NOTES)).status).toBe(200);
});

it('holds the answer back by the latency, in real milliseconds', async () => {
  const { key } = await w.newAccount();
  await w.faults([{ match: { path: '/v1/models' }, fault: { kind: 'latency', ms: 300 } }]);
  const started = performance.now();
  const res = await w.api(key, 'GET', '/v1/models');
  expect(res.status).toBe(200);
  expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  expect((await w.record(res.headers.get('x-request-id'))).injected_fault).toEqual({ rule: 'fault_1', kind: 'latency' });
  // Another path is not held back.
  const quick = performance.now();
  expect((await w.api(key, 'GET', '/v1/tasks')).status).toBe(200);
  expect(performance.now() - quick).toBeLessThan(250);
});

it('does nothing with a request whose client gave up during the latency', async () => {
  const { id, key } = await w.newAccount();
  await w.faults([{ match: { path: '/v1/tasks' }, fault: { kind: 'latency', ms: 300 } }]);
  const gaveUp = AbortSignal.timeout(50);
  await expect(fetch(`${w.base}/v1/tasks`, { method: 'POST', signal: gaveUp, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(NOTES) })).rejects.toThrow();
  // Past the latency (real time: the fault's), the request would have been handled by now.
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(await w.tasks(id)).toEqual([]);
  expect((await w.ledger(id)).map((e) => e.kind)).toEqual(['fund']);
});

it("waits between a stream's events with between_chunks, the stream whole", async () => {
  const { key } = await w.newAccount();
  await w.faults([{ match: { path: '/v1/chat/completions' }, fault: { kind: 'latency', ms: 40, between_chunks: true } }]);
  const started = performance.now();
  const read = await rawEvents(w.base, key, '/v1/chat/completions', { ...chat, stream: true, max_tokens: 8 });
  expect(read.ended).toBe('end');
  expect(read.events.at(-1)).toBe('data: [DONE]\n\n');
  expect(read.events.length).toBeGreaterThan(4);
  expect(performance.now() - started).toBeGreaterThanOrEqual((read.events.length - 1) * 40 * 0.8);
});

it('cuts a stream after N events without its error event; the openai SDK sees it break and the call is billed as a client that left', async () => {
  const { id, key } = await w.newAccount();
  await w.faults([{ match: { path: '/v1/chat/completions' }, fault: { kind: 'cut', after_chunks: 3 } }]);
  const raw = await rawEvents(w.base, key, '/v1/chat/completions', { ...chat, stream: true, max_tokens: 1000 }, { 'X-Emulator-Scenario': 'text-long' });
  expect(raw.ended).toBe('aborted');
  expect(raw.events).toHaveLength(3);
  expect(raw.events.join('')).not.toContain('"error"');

  const client = new OpenAI({ apiKey: key, baseURL: `${w.base}/v1`, maxRetries: 0 });
  const { data: stream, response } = await client.chat.completions
    .create({ ...chat, stream: true, max_tokens: 1000 }, { headers: { 'X-Emulator-Scenario': 'text-long' } })
    .withResponse();
  const chunks: unknown[] = [];
  const broken = await (async () => {
    for await (const chunk of stream) chunks.push(chunk);
  })().catch((e: unknown) => e);
  expect(broken).toBeInstanceOf(Error);
  expect(chunks).toHaveLength(3);

  const requestId = response.headers.get('x-request-id');
  await expect.poll(async () => (await w.record(requestId)).text?.client_closed).toBe(true);
  const record = await w.record(requestId);
  expect(record.injected_fault).toEqual({ rule: 'fault_1', kind: 'cut' });
  const text = record.text ?? expect.fail('no text in the record');
  // Charged on the output generated before the cut (not the 500 tokens asked for), the rest refunded.
  expect(text.output_tokens).toBeGreaterThan(0);
  expect(text.output_tokens).toBeLessThan(500);
  expect(new Big(text.points.charged).gt(0)).toBe(true);
  expect(new Big(text.points.refunded).gt(0)).toBe(true);
  expect(new Big(text.points.charged).plus(text.points.refunded).eq(text.points.frozen)).toBe(true);
  const entries = (await w.ledger(id)).filter((e) => e.call_id === requestId).map((e) => [e.kind, e.points]);
  expect(entries).toEqual([
    ['freeze', text.points.frozen],
    ['charge', text.points.charged],
    ['refund', text.points.refunded],
  ]);
});

it('trickles the answer at the given bytes per second, whole', async () => {
  const { key } = await w.newAccount();
  const plain = await (await w.api(key, 'GET', '/v1/models')).text();
  const rate = 4000;
  await w.faults([{ match: { path: '/v1/models' }, fault: { kind: 'trickle', bytes_per_second: rate } }]);
  const started = performance.now();
  const slow = await (await w.api(key, 'GET', '/v1/models')).text();
  expect(slow).toBe(plain);
  expect(plain.length).toBeGreaterThan(1000);
  // It goes out in tenth-of-a-second slices: the last arrives once all the others have had their time.
  expect(performance.now() - started).toBeGreaterThanOrEqual(((plain.length - rate / 10) / rate) * 1000 * 0.9);
});
