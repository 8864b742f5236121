import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { runParity } from '../../src/parity/index.ts';
import type { ParityReport } from '../../src/parity/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import type { Deviation } from '../../src/proxy/index.ts';
import { createRecorder, readRecording } from '../../src/recording/index.ts';

// One deliberately deviating service seen from both ends of the loop. It is the emulator behind a server of this
// file's own that changes four things: a task's points as a number, invalid_params answered with 400 instead of
// 422, a Messages stream with two events swapped, and a task list without X-Request-Id. The proxy in front of it, with
// the recorder on, must report each with its check id as the traffic passes; the recording replayed against a
// fresh emulator must show each in the parity report, by check, endpoint and JSON path. Nothing else may differ.

const ADMIN = 'deviating-admin';
const DEMO_KEY = 'sk-emulator-demo';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/deviating', agree: true } };

let emulator: Emulator;
let direct: string;
let deviant: Server;
const others: Emulator[] = [];
const dir = mkdtempSync(join(tmpdir(), 'svc-deviating-'));
let deviations: Deviation[] = [];
let report: ParityReport;

const body = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** What the deviating service changes in the emulator's answer to `route` (method and path without query). */
function deviate(route: string, status: number, text: string, headers: Headers): string {
  if (/^GET \/v1\/tasks\/T\w+$/.test(route) && status === 200) {
    const task = JSON.parse(text) as { points: Record<string, unknown> };
    task.points['frozen'] = Number(task.points['frozen']);
    return JSON.stringify(task);
  }
  if (route === 'POST /v1/tasks' && status === 422) headers.set('x-deviant-status', '400');
  if (route === 'POST /v1/messages' && headers.get('content-type')?.startsWith('text/event-stream')) {
    const events = text.split('\n\n');
    const start = events.findIndex((e) => e.startsWith('event: content_block_start'));
    const ping = events.findIndex((e) => e.startsWith('event: ping'));
    [events[start], events[ping]] = [events[ping] ?? '', events[start] ?? ''];
    return events.join('\n\n');
  }
  if (route === 'GET /v1/tasks') headers.delete('x-request-id');
  return text;
}

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  direct = await emulator.listen(0);
  deviant = createServer((req, res) => {
    void (async () => {
      const sent = await body(req);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
      const answer = await fetch(`${direct}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(sent.length > 0 ? { body: sent } : {}) });
      const out = new Headers(answer.headers);
      const text = deviate(`${req.method ?? 'GET'} ${(req.url ?? '/').split('?')[0] ?? ''}`, answer.status, await answer.text(), out);
      out.delete('content-length');
      out.delete('content-encoding');
      out.delete('transfer-encoding');
      out.delete('connection');
      const status = Number(out.get('x-deviant-status') ?? answer.status);
      out.delete('x-deviant-status');
      res.writeHead(status, Object.fromEntries(out)).end(text);
    })().catch((err: unknown) => res.writeHead(599).end(String(err)));
  });
  await new Promise<void>((resolve) => deviant.listen(0, '127.0.0.1', resolve));
  const upstream = `http://127.0.0.1:${(deviant.address() as AddressInfo).port}`;

  const recorder = createRecorder({ dir, upstream, writeDelayMs: 20 });
  const proxy = createProxy({ upstream, log: () => undefined, onExchange: recorder.onExchange });
  const url = await proxy.listen(0);
  const api = (method: string, path: string, json?: unknown): Promise<Response> =>
    fetch(`${url}${path}`, { method, headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' }, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
  const advance = (seconds: number): Promise<Response> =>
    fetch(`${direct}/_emulator/clock/advance`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ seconds }) });
  try {
    const task = (await (await api('POST', '/v1/tasks', NOTES)).json()) as { id: string };
    await advance(9);
    expect(((await (await api('GET', `/v1/tasks/${task.id}`)).json()) as { status: string }).status).toBe('succeeded');
    expect((await api('POST', '/v1/tasks', { model: 'social-notes-data', input: {} })).status).toBe(400);
    expect((await api('GET', '/v1/tasks?limit=1')).headers.get('x-request-id')).toBeNull();
    const anthropic = new Anthropic({ baseURL: url, apiKey: DEMO_KEY, maxRetries: 0 });
    const message = await anthropic.messages.stream({ model: 'svc-text-lite', max_tokens: 24, messages: [{ role: 'user', content: 'Say something.' }] }).finalMessage();
    expect(message.role).toBe('assistant');
  } finally {
    await proxy.close();
  }
  deviations = proxy.deviations();
  expect(await recorder.close()).toHaveLength(1);

  const fresh = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  others.push(fresh);
  report = await runParity({ recording: readRecording(dir), baseUrl: await fresh.listen(0), apiKey: DEMO_KEY, adminToken: ADMIN });
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => deviant.close(resolve));
  await emulator.close();
  for (const other of others) await other.close();
  rmSync(dir, { recursive: true, force: true });
});

it('the proxy reports each deviation of the service with its check id as it passes', () => {
  const found = [...new Set(deviations.map((d) => `${d.check} ${d.method} ${d.path.split('?')[0] ?? ''}`))].sort();
  expect(found).toEqual(
    [
      'text.messages.stream.order POST /v1/messages',
      'wire.points.decimal GET /v1/tasks/{id}',
      'wire.request-id.every-answer GET /v1/tasks',
      // The list shows the task's points as strings, GET as a number: the two answers disagree on one task.
      'tasks.list.item-as-get GET /v1/tasks',
      'wire.schema.response GET /v1/tasks',
      'wire.schema.response GET /v1/tasks/{id}',
      'wire.error-code.status POST /v1/tasks',
    ]
      .map((line) => line.replace('{id}', deviations.find((d) => d.path.startsWith('/v1/tasks/'))?.path.slice('/v1/tasks/'.length) ?? '?'))
      .sort(),
  );
});

it('the parity report of its recording against the emulator shows the same four, by check, endpoint and JSON path, and nothing else', () => {
  const differences = report.differences.map((d) => `${d.check} ${d.endpoint} ${d.path}`).sort();
  expect(differences).toEqual(
    [
      'parity.body.shape GET /v1/tasks/{id} $.points.frozen',
      'parity.status POST /v1/tasks status',
      'parity.headers.request-id GET /v1/tasks headers.x-request-id',
      'parity.stream.events POST /v1/messages events[1]',
    ].sort(),
  );
  expect(report.differences.find((d) => d.path === '$.points.frozen')).toMatchObject({ recorded: 'number', replayed: 'string' });
  expect(report.differences.find((d) => d.check === 'parity.status')).toMatchObject({ recorded: 400, replayed: 422 });
});
