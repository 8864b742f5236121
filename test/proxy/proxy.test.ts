import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { parseProxyOptions, proxy } from '../../src/cli/proxy.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import type { Deviation } from '../../src/proxy/index.ts';
import { runCommand, spawnCommand } from '../support/command.ts';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';

// The proxy between real clients (the official SDKs, fetch) and two upstreams: the emulator, which conforms, and a
// small server of this file's own that deviates on purpose, one way per route.

const ADMIN = 'proxy-admin';
const REQUEST_ID = 'req_aaaaaaaaaaaaaaaaaaaaaaaa';
/** The held stream: a chat stream in the documented order, its first chunk sent before the upstream holds the rest. */
const HELD_FIRST = 'data: {"id":"svcchat_HELD1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n';
const HELD_REST = 'data: {"id":"svcchat_HELD1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/proxy', agree: true } };

let emulator: Emulator;
let direct: string;
let key: string;
/** A task as the emulator answers it: the deviating server's answers are it with one thing changed. */
let goodTask: Record<string, unknown>;
let goodList: unknown;

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  const control = async (path: string, body: object): Promise<Record<string, unknown>> => {
    const res = await fetch(`${direct}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.ok, `${path} answered ${res.status}`).toBe(true);
    return (await res.json()) as Record<string, unknown>;
  };
  const account = await control('/_emulator/accounts', { points: '100000.000' });
  key = String((await control(`/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
  goodTask = (await (await api(direct, 'POST', '/v1/tasks', NOTES)).json()) as Record<string, unknown>;
  goodList = await (await api(direct, 'GET', '/v1/tasks?limit=1')).json();
});
afterAll(() => emulator.close());

const running = closedAfterEach();

function api(base: string, method: string, path: string, body?: unknown, withKey = true): Promise<Response> {
  const headers: Record<string, string> = {};
  if (withKey) headers['Authorization'] = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function listed(url: string): Promise<{ data: Deviation[]; count: number }> {
  const res = await fetch(`${url}/_emulator/proxy/deviations`);
  expect(res.status).toBe(200);
  return (await res.json()) as { data: Deviation[]; count: number };
}

/** The shape of a JSON value: its keys and the types of its leaves, values left out. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, shape(v)]));
  return value === null ? null : typeof value;
}

it('in front of the emulator: the SDKs, streams and plain requests get what they get directly, and nothing deviates', async () => {
  const lines: string[] = [];
  const { proxy, url } = await startProxy(direct, running, lines);

  const openai = (base: string): OpenAI => new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
  const anthropic = (base: string): Anthropic => new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0 });
  const chat = { model: 'svc-text-pro', messages: [{ role: 'user' as const, content: 'How should I plan a small project?' }] };
  const message = { model: 'svc-text-pro', max_tokens: 64, messages: [{ role: 'user' as const, content: 'How should I plan a small project?' }] };

  const viaChat = await openai(url).chat.completions.create(chat);
  expect(shape(viaChat)).toEqual(shape(await openai(direct).chat.completions.create(chat)));
  expect(viaChat._request_id).toMatch(/^req_[a-z0-9]{24}$/);
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of await openai(url).chat.completions.create({ ...chat, stream: true, stream_options: { include_usage: true } })) chunks.push(chunk);
  expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(viaChat.choices[0]?.message.content);
  expect(chunks.at(-1)?.usage?.completion_tokens).toBe(viaChat.usage?.completion_tokens);

  const viaMessage = await anthropic(url).messages.create(message);
  expect(shape(viaMessage)).toEqual(shape(await anthropic(direct).messages.create(message)));
  const streamed = await anthropic(url).messages.stream(message).finalMessage();
  expect(streamed.content).toEqual(viaMessage.content);
  expect(streamed.usage.output_tokens).toBe(viaMessage.usage.output_tokens);

  const submitted = await api(url, 'POST', '/v1/tasks', NOTES);
  expect(submitted.status).toBe(200);
  const task = (await submitted.json()) as { id: string };
  expect(shape(task)).toEqual(shape(goodTask));
  const got = await api(url, 'GET', `/v1/tasks/${task.id}`);
  expect(got.status).toBe(200);
  expect(((await got.json()) as { id: string }).id).toBe(task.id);

  for (const [method, path, body, withKey] of [
    ['POST', '/v1/tasks', { model: 'social-notes-data', input: {} }, true],
    ['GET', '/v1/tasks', undefined, false],
  ] as const) {
    const [via, straight] = [await api(url, method, path, body, withKey), await api(direct, method, path, body, withKey)];
    expect(via.status).toBe(straight.status);
    expect(via.headers.get('content-type')).toBe(straight.headers.get('content-type'));
    const [viaBody, straightBody] = [(await via.json()) as { error: { code: string; request_id: string } }, (await straight.json()) as { error: { code: string } }];
    expect(viaBody.error.code).toBe(straightBody.error.code);
    expect(viaBody.error.request_id).toBe(via.headers.get('x-request-id'));
  }
  expect([(await api(url, 'POST', '/v1/tasks', { model: 'social-notes-data', input: {} })).status, (await api(url, 'GET', '/v1/tasks', undefined, false)).status]).toEqual([422, 401]);

  expect(await listed(url)).toEqual({ data: [], count: 0 });
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
}, 60_000);

/** The deviating upstream: each route answers like the emulator but for one thing. `release` ends the held stream. */
function deviatingUpstream(): { server: Server; url: Promise<string>; release: () => void } {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = { 'X-Request-Id': REQUEST_ID }): void =>
    void res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    req.resume();
    const route = `${req.method} ${req.url}`;
    const points = goodTask['points'] as Record<string, string>;
    if (route === 'GET /v1/tasks/T000000000000FLOAT1') return json(res, 200, { ...goodTask, id: 'T000000000000FLOAT1', points: { ...points, frozen: 33 } });
    if (route === 'GET /v1/tasks/T000000000000UTCTM1') return json(res, 200, { ...goodTask, id: 'T000000000000UTCTM1', created_at: '2026-11-23T01:30:00Z' });
    if (route === 'GET /v1/tasks?limit=1') return json(res, 200, goodList, {});
    if (route === 'GET /v1/tasks/T000000000000MISSIN') return json(res, 404, { message: 'not here' });
    // Answers nothing until released: a client can leave before the upstream has answered.
    if (route === 'GET /v1/tasks/T000000000000HOLDIN') return void held.then(() => json(res, 200, goodTask));
    if (route === 'POST /v1/chat/completions') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', 'X-Request-Id': REQUEST_ID });
      res.write(HELD_FIRST);
      void held.then(() => res.end(HELD_REST));
      return;
    }
    json(res, 500, { error: { code: 'internal', message: `no route ${route}`, request_id: REQUEST_ID } });
  });
  const url = listenLocal(server, running);
  return { server, url, release };
}

it('in front of a deviating server: lists and logs each deviation with its check id, request and a curl line without the key', async () => {
  const upstream = deviatingUpstream();
  const lines: string[] = [];
  const { url } = await startProxy(await upstream.url, running, lines);

  // The held stream: its first event reaches the client while the upstream still holds the rest.
  const streaming = await api(url, 'POST', '/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'hi' }], stream: true });
  expect(streaming.status).toBe(200);
  const reader = (streaming.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toBe(HELD_FIRST);
  upstream.release();
  let rest = '';
  for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value);
  expect(rest).toBe(HELD_REST);

  const float = await api(url, 'GET', '/v1/tasks/T000000000000FLOAT1');
  expect(((await float.json()) as { points: { frozen: unknown } }).points.frozen).toBe(33);
  await (await api(url, 'GET', '/v1/tasks/T000000000000UTCTM1')).arrayBuffer();
  const bare = await api(url, 'GET', '/v1/tasks?limit=1');
  expect(bare.headers.get('x-request-id')).toBeNull();
  await bare.arrayBuffer();
  const missing = await api(url, 'GET', '/v1/tasks/T000000000000MISSIN');
  expect(missing.status).toBe(404);
  expect(await missing.json()).toEqual({ message: 'not here' });

  const { data, count } = await listed(url);
  expect(count).toBe(data.length);
  const ids = data.map((d) => `${d.check} ${d.method} ${d.path}`);
  expect(ids).toEqual([
    'wire.schema.response GET /v1/tasks/T000000000000FLOAT1',
    'wire.points.decimal GET /v1/tasks/T000000000000FLOAT1',
    'wire.schema.response GET /v1/tasks/T000000000000UTCTM1',
    'wire.time.beijing GET /v1/tasks/T000000000000UTCTM1',
    'wire.request-id.every-answer GET /v1/tasks?limit=1',
    'wire.schema.response GET /v1/tasks?limit=1',
    // The list shows the one task it had when taken, not the two read before it: a gap, across answers.
    'tasks.list.no-gap GET /v1/tasks?limit=1',
    'wire.schema.response GET /v1/tasks/T000000000000MISSIN',
    'wire.error-shape.body GET /v1/tasks/T000000000000MISSIN',
    // A 404 to a task's own path says not_found: this one says nothing.
    'tasks.not-found.code GET /v1/tasks/T000000000000MISSIN',
  ]);
  // The held stream matched the document and kept the chat order: no deviation of its own.
  expect(data.filter((d) => d.path === '/v1/chat/completions')).toEqual([]);

  const byCheck = (check: string): Deviation | undefined => data.find((d) => d.check === check);
  expect(byCheck('wire.points.decimal')).toMatchObject({ status: 200, request_id: REQUEST_ID, message: 'points.frozen is not a string with three decimals (expected d.ddd, got 33)' });
  expect(byCheck('wire.time.beijing')?.message).toContain('created_at is not ISO 8601 with +08:00');
  expect(byCheck('wire.request-id.every-answer')).toMatchObject({ status: 200, request_id: null, message: expect.stringContaining('X-Request-Id missing or malformed') as unknown });
  // The document requires the header too, so its check names the same fault in its own words.
  expect(data.find((d) => d.check === 'wire.schema.response' && d.path === '/v1/tasks?limit=1')?.message).toBe('answer does not match the document: header X-Request-Id is missing');
  expect(byCheck('wire.error-shape.body')).toMatchObject({ status: 404, request_id: REQUEST_ID });
  for (const d of data) {
    expect(d.curl).toBe(`curl -sS -X GET '${await upstream.url}${d.path}' -H 'authorization: Bearer sk-REDACTED'`);
    expect(d.curl).not.toContain(key);
  }
  expect(lines).toEqual(data.map((d) => `deviation ${d.check} ${d.method} ${d.path} ${d.status} ${d.request_id ?? '-'}: ${d.message}`));
}, 30_000);

it('a client that leaves before the answer or mid-stream: the upstream request goes too, and nothing is logged as an upstream failure', async () => {
  const upstream = deviatingUpstream();
  const upstreamUrl = await upstream.url;
  const seen: Promise<void>[] = [];
  let arrived!: () => void;
  let arrival = new Promise<void>((resolve) => (arrived = resolve));
  upstream.server.on('request', (_req, res: ServerResponse) => {
    seen.push(new Promise<void>((resolve) => res.once('close', () => resolve())));
    arrived();
  });
  const lines: string[] = [];
  const { proxy, url } = await startProxy(upstreamUrl, running, lines);

  const before = new AbortController();
  const waiting = fetch(`${url}/v1/tasks/T000000000000HOLDIN`, { signal: before.signal }).catch((err: unknown) => err);
  await arrival;
  before.abort();
  expect(await waiting).toBeInstanceOf(Error);

  arrival = new Promise<void>((resolve) => (arrived = resolve));
  const during = new AbortController();
  const streaming = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}', signal: during.signal });
  const reader = (streaming.body as ReadableStream<Uint8Array>).getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe(HELD_FIRST);
  during.abort();
  await Promise.all(seen);
  expect(seen).toHaveLength(2);
  await proxy.settled();
  expect(lines).toEqual([]);
});

it('svc-emulator proxy: prints its address, lists deviations at its endpoint, writes them with --json and --junit, and the recording, on SIGTERM', async () => {
  const upstream = deviatingUpstream();
  const upstreamUrl = await upstream.url;
  const dir = mkdtempSync(join(tmpdir(), 'proxy-'));
  const report = join(dir, 'deviations.json');
  const junit = join(dir, 'proxy.xml');
  const recording = join(dir, 'recorded');
  const child = spawnCommand(['proxy', '--upstream', upstreamUrl, '--port', '0', '--json', report, '--junit', junit, '--record', recording]);
  running.push({ close: async () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')) });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const found = /proxy listening on (http:\/\/\S+) → (\S+)/.exec(output);
      if (found) {
        expect(found[2]).toBe(upstreamUrl);
        resolve(found[1] ?? '');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited ${code} before listening:\n${output}`)));
  });

  await (await api(url, 'GET', '/v1/tasks?limit=1')).arrayBuffer();
  const { data, count } = await listed(url);
  expect(count).toBe(2);
  expect(data.map((d) => d.check)).toEqual(['wire.request-id.every-answer', 'wire.schema.response']);
  expect(data[0]).toMatchObject({ method: 'GET', path: '/v1/tasks?limit=1', status: 200, request_id: null });

  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output).toContain('deviation wire.request-id.every-answer GET /v1/tasks?limit=1 200 -: X-Request-Id missing or malformed');
  const written = JSON.parse(readFileSync(report, 'utf8')) as { upstream: string; count: number; data: Deviation[] };
  expect(written).toEqual({ upstream: upstreamUrl, exchanges: 1, count: 2, data });
  expect(output).toContain(`proxy stopped: 1 exchange checked, 2 deviations (written to ${report}, ${junit})`);
  const xml = readFileSync(junit, 'utf8');
  expect(xml).toMatch(/<testcase [^>]*name="wire\.request-id\.every-answer"[^>]*>\s*<failure/);
  expect(xml).toMatch(/<testcase [^>]*name="wire\.status\.no-5xx"[^>]*\/>|<testcase [^>]*name="wire\.status\.no-5xx"[^>]*><\/testcase>/);
  const files = readdirSync(recording).filter((name) => name.endsWith('.har'));
  expect(files).toHaveLength(1);
  expect(output).toContain(`recorded: ${join(recording, files[0] ?? '')}`);
  const har = JSON.parse(readFileSync(join(recording, files[0] ?? ''), 'utf8')) as { log: { version: string; entries: { request: { url: string; headers: { name: string; value: string }[] } }[] } };
  expect(har.log.version).toBe('1.2');
  expect(har.log.entries.map((e) => e.request.url)).toEqual([`${upstreamUrl}/v1/tasks?limit=1`]);
  expect(JSON.stringify(har)).not.toContain(key);
}, 30_000);

// A usage error is one line on standard error and exit 2 (src/cli/main.ts prints every UsageError so: through the
// process, the last test of this file); the two before it are the command's own code, in this process.
it('svc-emulator proxy: --keep-content without --record is a usage error', () => {
  expect(() => parseProxyOptions(['--upstream', 'http://127.0.0.1:9', '--keep-content'])).toThrow(UsageError);
  expect(() => parseProxyOptions(['--upstream', 'http://127.0.0.1:9', '--keep-content'])).toThrow(/^svc-emulator proxy: --keep-content goes with --record DIR$/);
});

it('svc-emulator proxy --record where nothing can be written: one line naming why, exit 2, before it listens', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-'));
  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  const printed = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const refused = await proxy(parseProxyOptions(['--upstream', 'http://127.0.0.1:9', '--port', '0', '--record', join(file, 'recorded')])).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toBe(`svc-emulator proxy: --record ${join(file, 'recorded')}: cannot write there (ENOTDIR: not a directory, mkdir '${join(file, 'recorded')}')`);
    // Before it listens: it printed nothing (no address).
    expect(printed).not.toHaveBeenCalled();
  } finally {
    printed.mockRestore();
  }
});

it('svc-emulator proxy without --upstream says so in one line and exits 2', async () => {
  const run = await runCommand(['proxy', '--port', '0'], 25_000);
  expect(run.code).toBe(2);
  expect(run.stderr.split('\n')[0]).toBe('svc-emulator proxy: --upstream URL is required');
}, 30_000);
