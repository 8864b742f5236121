import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import type { Deviation } from '../../src/proxy/index.ts';
import { parseProxyOptions } from '../../src/cli/proxy.ts';
import { spawnCommand } from '../support/command.ts';
import { closedAfterEach, startProxy } from '../support/proxy.ts';
import { ioUntil, startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

// What the checking proxy sees but used not to judge, each driven through `svc-emulator proxy --relay-callbacks
// --admin-url` (a child process, as an integrator runs it) in front of a service of this file's own: the emulator
// behind a server that changes one thing per test. In front of the plain emulator, the same traffic finds nothing
// (a natural answer of exactly max_tokens included). The proxy runs on for the whole file; each test reads the
// deviations found since the one before, and the last stops it and reads its --json report.

const ADMIN = 'judgements-admin';
const NOTES = (order: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'social-notes-data',
  input: { mode: 'note', note: `https://notes.example.com/n/${order}`, agree: true },
  metadata: { order },
  ...extra,
});
const HELLO = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Hello there' }] };

interface Asked {
  method: string;
  path: string;
  query: URLSearchParams;
  auth: string;
  body: string;
}
interface Answer {
  status: number;
  headers: Headers;
  text: string;
}
/** What the service of this file changes in the emulator's answer (in place), and in the request on its way. */
let deviate: ((asked: Asked, answer: Answer) => void | Promise<void>) | null = null;
let rewrite: ((asked: Asked) => string) | null = null;

let emulator: Emulator;
let direct: string;
let deviant: Server;
let proxy: string;
let upstreamUrl: string;
const closing = closedAfterEach();
let child: ReturnType<typeof spawnCommand>;
let output = '';
let exited: Promise<number | null>;
let sink: Receiver;
const dir = mkdtempSync(join(tmpdir(), 'svc-judgements-'));
const report = join(dir, 'deviations.json');
let reported = 0;

const read = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

async function control(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${direct}${path}`, { method, headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect(res.ok, `${method} ${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}
const advance = (seconds: number): Promise<unknown> => control('POST', '/_emulator/clock/advance', { seconds });

/** A fresh account's key, with `settings`. */
async function keyOf(settings: Record<string, unknown> = {}): Promise<string> {
  const account = await control('POST', '/_emulator/accounts', { points: '100000.000' });
  return String((await control('POST', `/_emulator/accounts/${String(account['id'])}/keys`, settings))['key']);
}

/** A /v1 call through the proxy, with `key` as a bearer (or `headers` as they are), its answer read whole. */
async function call(key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown>; text: string; headers: Headers }> {
  const all: Record<string, string> = { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers };
  if (body !== undefined) all['Content-Type'] ??= 'application/json';
  const res = await fetch(`${proxy}${path}`, { method, headers: all, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // An event stream.
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** The deviations the proxy found since the last call (its endpoint answers once every check has run). */
async function found(): Promise<Deviation[]> {
  const { data } = (await (await fetch(`${proxy}/_emulator/proxy/deviations`)).json()) as { data: Deviation[] };
  const fresh = data.slice(reported);
  reported = data.length;
  return fresh;
}
const checksOf = (deviations: Deviation[]): string[] => [...new Set(deviations.map((d) => d.check))].sort();

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  sink = await startReceiver();
  deviant = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const asked: Asked = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, auth: String(req.headers['authorization'] ?? req.headers['x-api-key'] ?? ''), body: await read(req) };
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
      const body = rewrite ? rewrite(asked) : asked.body;
      const upstream = await fetch(`${direct}${req.url ?? '/'}`, { method: asked.method, headers, ...(body === '' ? {} : { body }) });
      const answer: Answer = { status: upstream.status, headers: new Headers(upstream.headers), text: await upstream.text() };
      await deviate?.(asked, answer);
      for (const name of ['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive']) answer.headers.delete(name);
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => (out[name] = value));
      res.writeHead(answer.status, out).end(answer.text);
    })().catch((err: unknown) => res.writeHead(599).end(String(err)));
  });
  await new Promise<void>((resolve) => deviant.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(deviant.address() as AddressInfo).port}`;
  child = spawnCommand(['proxy', '--upstream', upstreamUrl, '--port', '0', '--relay-callbacks', '--admin-url', direct, '--admin-token', ADMIN, '--callback-deadline-ms', '30000', '--json', report]);
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  proxy = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const listening = /proxy listening on (http:\/\/\S+)/.exec(output);
      if (listening) resolve(listening[1] ?? '');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited ${code} before listening:\n${output}`)));
  });
}, 60_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await new Promise((resolve) => deviant.close(resolve));
  await sink.close();
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

// Between the tests: the service of this file goes back to the emulator's own answers.
afterEach(() => {
  deviate = null;
  rewrite = null;
});

/** Each scenario's traffic: run once in front of the plain emulator, then once per deviation. */
const traffic = {
  /** A key of one request a minute, asked twice. */
  async rateLimited(): Promise<void> {
    const key = await keyOf({ rpm: 1 });
    expect((await call(key, 'GET', '/v1/tasks?limit=1')).status).toBe(200);
    expect((await call(key, 'GET', '/v1/tasks?limit=1')).status).toBe(429);
  },
  async streams(key: string): Promise<void> {
    expect((await call(key, 'POST', '/v1/chat/completions', { ...HELLO, stream: true })).headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect((await call(key, 'POST', '/v1/messages', { ...HELLO, max_tokens: 50, stream: true })).headers.get('content-type')).toMatch(/^text\/event-stream/);
  },
  /** A refused key, and an unknown task. */
  async requestIds(key: string): Promise<void> {
    expect((await call('sk-not-a-key', 'GET', '/v1/tasks')).status).toBe(401);
    expect((await call(key, 'GET', '/v1/tasks/T000000000000NOSUCH')).status).toBe(404);
  },
  /** Error answers that must fit what was asked. */
  async codes(key: string): Promise<void> {
    const { json: task } = await call(key, 'POST', '/v1/tasks', NOTES('codes'), { 'X-Emulator-Scenario': 'instant' });
    await advance(0);
    expect((await call(key, 'GET', `/v1/tasks/${String(task['id'])}`)).json['status']).toBe('succeeded');
    await call(key, 'POST', `/v1/tasks/${String(task['id'])}/cancel`);
    await call(key, 'POST', '/v1/tasks/T000000000000NOSUCH/cancel');
    await call(key, 'POST', '/v1/chat/completions', '{"model": "svc-text-lite", "messages": [');
    await call(key, 'POST', '/v1/responses', { model: 'svc-text-lite', input: 'Hello there', tools: [{ type: 'function', name: 'f' }] });
    await call(null, 'POST', '/v1/messages', { ...HELLO, max_tokens: 50 }, { 'x-api-key': key });
  },
};

it('in front of the plain emulator: the traffic of every judgement below, a natural answer of exactly max_tokens among it, finds nothing', async () => {
  const key = await keyOf();
  await traffic.rateLimited();
  await traffic.streams(key);
  await traffic.requestIds(key);
  await traffic.codes(key);
  // svc-text-lite's whole answer to "Hello there" is 50 tokens: asked for at most 50, it ends there naturally.
  for (const [path, body] of [
    ['/v1/chat/completions', { ...HELLO, max_tokens: 50 }],
    ['/v1/responses', { model: 'svc-text-lite', input: 'Hello there', max_output_tokens: 50 }],
    ['/v1/messages', { ...HELLO, max_tokens: 50 }],
  ] as const) {
    const { json } = await call(key, 'POST', path, body);
    const usage = json['usage'] as Record<string, number>;
    expect(usage['completion_tokens'] ?? usage['output_tokens']).toBe(50);
  }
  expect(await found()).toEqual([]);
}, 30_000);

it('reports a 429 without Retry-After', async () => {
  deviate = (_asked, answer) => void (answer.status === 429 && answer.headers.delete('retry-after'));
  await traffic.rateLimited();
  const deviations = await found();
  expect(checksOf(deviations)).toEqual(['wire.retry-after.rate-limited']);
  expect(deviations[0]).toMatchObject({ method: 'GET', path: '/v1/tasks?limit=1', status: 429 });
});

it('reports streams without Cache-Control: no-cache or X-Accel-Buffering: no', async () => {
  deviate = (asked, answer) => {
    if (asked.path === '/v1/chat/completions') answer.headers.set('cache-control', 'no-transform');
    if (asked.path === '/v1/messages') answer.headers.delete('x-accel-buffering');
  };
  await traffic.streams(await keyOf());
  const deviations = await found();
  expect(deviations.map((d) => `${d.check} ${d.path}`).sort()).toEqual(['text.stream.no-buffering /v1/chat/completions', 'text.stream.no-buffering /v1/messages']);
});

it('reports a 401 without X-Request-Id and an error whose request_id is not the header’s', async () => {
  deviate = (asked, answer) => {
    if (answer.status === 401) answer.headers.delete('x-request-id');
    if (answer.status === 404) answer.text = answer.text.replace(/"request_id":"req_\w+"/, '"request_id":"req_000000000000000000000000"');
  };
  await traffic.requestIds(await keyOf());
  const deviations = await found();
  // The 401's body names a request id its headers do not carry, which the document requires of it.
  expect(deviations.map((d) => `${d.check} ${d.status}: ${d.message}`).sort()).toEqual([
    expect.stringMatching(/^wire\.request-id\.every-answer 401: X-Request-Id missing or malformed/),
    expect.stringMatching(/^wire\.request-id\.every-answer 401: error\.request_id differs from X-Request-Id/),
    expect.stringMatching(/^wire\.request-id\.every-answer 404: error\.request_id differs from X-Request-Id/),
    expect.stringMatching(/^wire\.schema\.response 401: .*X-Request-Id/i),
  ]);
});

it('reports error codes that do not fit the request, and a cancel of a task seen succeeded answered 200', async () => {
  deviate = (asked, answer) => {
    if (/\/cancel$/.test(asked.path) && answer.status === 409) answer.text = answer.text.replace('task_not_cancelable', 'conflict');
    if (/\/cancel$/.test(asked.path) && answer.status === 404) answer.text = answer.text.replace('"not_found"', '"task_missing"');
    if (asked.path === '/v1/chat/completions' && answer.status === 400) {
      answer.status = 422;
      answer.text = answer.text.replaceAll('bad_request', 'invalid_params');
    }
    if (asked.path === '/v1/responses' && answer.status === 422) {
      answer.status = 400;
      answer.text = answer.text.replaceAll('invalid_params', 'bad_request');
    }
    if (asked.path === '/v1/messages' && !asked.auth.startsWith('Bearer')) {
      answer.status = 401;
      answer.text = JSON.stringify({ type: 'error', error: { type: 'invalid_api_key', message: 'Use Authorization.', code: 'invalid_api_key', request_id: answer.headers.get('x-request-id') } });
      answer.headers.set('content-type', 'application/json');
    }
  };
  await traffic.codes(await keyOf());
  const deviations = await found();
  expect(checksOf(deviations)).toEqual(['tasks.cancel.conflict-code', 'tasks.not-found.code', 'text.bad-request.non-json', 'text.messages.x-api-key', 'text.responses.unsupported-refused']);

  // A cancel of a task already read succeeded, answered 200 with the task as it was.
  const key = await keyOf();
  const { json: task } = await call(key, 'POST', '/v1/tasks', NOTES('terminal'), { 'X-Emulator-Scenario': 'instant' });
  await advance(0);
  const done = await call(key, 'GET', `/v1/tasks/${String(task['id'])}`);
  deviate = (asked, answer) => {
    if (/\/cancel$/.test(asked.path)) {
      answer.status = 200;
      answer.text = done.text;
    }
  };
  expect((await call(key, 'POST', `/v1/tasks/${String(task['id'])}/cancel`)).status).toBe(200);
  // A 200 to a cancel that does not cancel is the consequences rules' (src/observed/consequences.ts) to say too.
  const checks = checksOf(await found());
  expect(checks).toContain('tasks.cancel.terminal-conflict');
  expect(checks.filter((c) => c !== 'tasks.cancel.terminal-conflict' && !c.startsWith('tasks.cancel.'))).toEqual([]);
});

it('reports a task of one account read and listed through another account’s key', async () => {
  const [mine, theirs] = [await keyOf(), await keyOf()];
  const { json: task } = await call(mine, 'POST', '/v1/tasks', NOTES('isolation'));
  const own = await call(mine, 'GET', `/v1/tasks/${String(task['id'])}`);
  deviate = (asked, answer) => {
    if (asked.auth !== `Bearer ${theirs}`) return;
    if (asked.path === `/v1/tasks/${String(task['id'])}`) {
      answer.status = 200;
      answer.text = own.text;
    }
    if (asked.path === '/v1/tasks') answer.text = JSON.stringify({ ...(JSON.parse(answer.text) as object), data: [JSON.parse(own.text)] });
  };
  expect((await call(theirs, 'GET', `/v1/tasks/${String(task['id'])}`)).status).toBe(200);
  await call(theirs, 'GET', '/v1/tasks');
  const deviations = await found();
  expect(checksOf(deviations)).toEqual(['tasks.isolation.observed']);
  expect(deviations.map((d) => `${d.method} ${d.path}`)).toEqual([`GET /v1/tasks/${String(task['id'])}`, 'GET /v1/tasks']);
  expect(JSON.stringify(deviations)).not.toContain(theirs);
});

it('without the control API, holds two keys apart only once the service showed them apart: a 404 for the other’s task', async () => {
  const lines: string[] = [];
  const plain = await startProxy(upstreamUrl, closing, lines);
  const through = (key: string, method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${plain.url}${path}`, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  // Two keys of one account see each other's tasks, as they should: nothing says they are two accounts.
  const account = await control('POST', '/_emulator/accounts', { points: '1000.000' });
  const [first, second] = [0, 1].map(async () => String((await control('POST', `/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']));
  const shared = (await (await through(await first!, 'POST', '/v1/tasks', NOTES('shared'))).json()) as { id: string };
  expect((await through(await second!, 'GET', `/v1/tasks/${shared.id}`)).status).toBe(200);
  // Two accounts: the other's task is 404 to the second, until the service lists it to it.
  const [mine, theirs] = [await keyOf(), await keyOf()];
  const task = (await (await through(mine, 'POST', '/v1/tasks', NOTES('apart'))).json()) as Record<string, unknown>;
  expect((await through(theirs, 'GET', `/v1/tasks/${String(task['id'])}`)).status).toBe(404);
  deviate = (asked, answer) => {
    if (asked.auth === `Bearer ${theirs}` && asked.path === '/v1/tasks') answer.text = JSON.stringify({ ...(JSON.parse(answer.text) as object), data: [task] });
  };
  await (await through(theirs, 'GET', '/v1/tasks')).arrayBuffer();
  await plain.proxy.settled();
  expect(plain.proxy.deviations().map((d) => `${d.check} ${d.method} ${d.path}`)).toEqual(['tasks.isolation.observed GET /v1/tasks']);
  expect(lines).toEqual([expect.stringMatching(/^deviation tasks\.isolation\.observed GET \/v1\/tasks 200 req_\w+: task T\w+ was created through another account’s key key_[0-9a-f]{16} \(req_\w+\) and listed through this account’s key/)]);
});

it('takes --callback-deadline-ms with --relay-callbacks only, in whole milliseconds', () => {
  const base = ['--upstream', 'http://127.0.0.1:4010', '--relay-callbacks'];
  expect(parseProxyOptions(base).relay?.callbackDeadlineMs).toBe(60_000);
  expect(parseProxyOptions([...base, '--callback-deadline-ms', '0']).relay?.callbackDeadlineMs).toBe(0);
  expect(() => parseProxyOptions(['--upstream', 'http://127.0.0.1:4010', '--callback-deadline-ms', '5000'])).toThrow('--callback-deadline-ms goes with --relay-callbacks');
  for (const bad of ['1.5', '-1', 'soon', '']) expect(() => parseProxyOptions([...base, `--callback-deadline-ms=${bad}`])).toThrow('must be a whole number of milliseconds');
});

it('reports a task an answer said was canceled read processing later', async () => {
  const key = await keyOf();
  const { json: task } = await call(key, 'POST', '/v1/tasks', NOTES('canceled'));
  expect((await call(key, 'POST', `/v1/tasks/${String(task['id'])}/cancel`)).json['status']).toBe('canceled');
  deviate = (asked, answer) => {
    if (asked.path !== `/v1/tasks/${String(task['id'])}`) return;
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    answer.text = JSON.stringify({ ...body, status: 'processing', started_at: body['created_at'], finished_at: null, error: null, points: { frozen: '40.000', charged: '0.000', refunded: '0.000' } });
  };
  await call(key, 'GET', `/v1/tasks/${String(task['id'])}`);
  // The shared checker's lifecycle rules judge it in the proxy's traffic as in the suite's (the consequences rules
  // of src/observed/consequences.ts hold a cancel's answer to later reads, and may say so too).
  const checks = checksOf(await found());
  expect(checks).toContain('lifecycle.status.forward-only');
  expect(checks.filter((c) => c !== 'lifecycle.status.forward-only' && !c.startsWith('tasks.cancel.'))).toEqual([]);
});

it('reports list pages of tasks created in one second that are not newest first, or skip one between pages', async () => {
  const key = await keyOf();
  // The manual clock stands still: five tasks created in the same second, each submitted after the one before.
  for (const order of ['1', '2', '3', '4', '5']) await call(key, 'POST', '/v1/tasks', NOTES(`page-${order}`));
  const walk = async (): Promise<void> => {
    for (const page of [1, 2, 3]) if (!(await call(key, 'GET', `/v1/tasks?limit=2&page=${page}`)).json['has_more']) break;
  };
  await walk();
  expect(await found()).toEqual([]);

  // Page 2's two tasks swapped.
  deviate = (asked, answer) => {
    if (asked.path !== '/v1/tasks' || asked.query.get('page') !== '2') return;
    const list = JSON.parse(answer.text) as { data: unknown[] };
    answer.text = JSON.stringify({ ...list, data: [...list.data].reverse() });
  };
  await walk();
  expect(checksOf(await found())).toEqual(['tasks.list.newest-first.same-second']);

  // Page 2 as if page 1 had held three: the third newest is on neither page.
  deviate = async (asked, answer) => {
    if (asked.path !== '/v1/tasks' || asked.query.get('page') !== '2') return;
    const all = (await (await fetch(`${direct}/v1/tasks?limit=5`, { headers: { Authorization: asked.auth } })).json()) as { data: unknown[] };
    answer.text = JSON.stringify({ ...(JSON.parse(answer.text) as object), data: all.data.slice(3), has_more: false });
  };
  await walk();
  const skipped = await found();
  expect(checksOf(skipped)).toEqual(['tasks.list.no-skip']);
  expect(skipped[0]?.message).toMatch(/missing between page 1 .* and page 2/);
});

it('reports an answer cut at max_tokens that says it stopped, when the same request goes on past it', async () => {
  const key = await keyOf();
  deviate = (asked, answer) => void (asked.path === '/v1/chat/completions' && (answer.text = answer.text.replace('"finish_reason":"length"', '"finish_reason":"stop"')));
  await call(key, 'POST', '/v1/chat/completions', HELLO);
  expect(await found()).toEqual([]);
  await call(key, 'POST', '/v1/chat/completions', { ...HELLO, max_tokens: 3 });
  const deviations = await found();
  expect(checksOf(deviations)).toEqual(['text.truncation.at-max']);
  expect(deviations[0]?.request_ids).toHaveLength(2);
});

it('reports, at the latest when it stops, a relayed task read terminal whose callback did not come within --callback-deadline-ms of the deployment’s clock', async () => {
  const key = await keyOf();
  const hook = await startReceiver();
  // The service sends the callback of the task ordered "lost" elsewhere than the address it was given.
  rewrite = (asked) => (asked.path === '/v1/tasks' && asked.body.includes('"lost"') ? asked.body.replace(/"webhook_url":"[^"]*"/, `"webhook_url":${JSON.stringify(sink.url)}`) : asked.body);
  const ids: string[] = [];
  for (const order of ['lost', 'delivered']) ids.push(String((await call(key, 'POST', '/v1/tasks', NOTES(order, { webhook_url: hook.url }), { 'X-Emulator-Scenario': 'instant' })).json['id']));
  await advance(0);
  expect(await ioUntil(() => hook.received.length === 1 && sink.received.length === 1)).toBe(true);
  for (const id of ids) expect((await call(key, 'GET', `/v1/tasks/${id}`)).json['status']).toBe('succeeded');
  // 29 seconds later on the emulator's clock: within the deadline.
  await advance(29);
  await call(key, 'GET', '/v1/tasks?limit=1');
  expect(await found()).toEqual([]);
  // Past it, however late the proxy read the clock for the read's answer (an upper bound: the answer went on first):
  // judged once the proxy has had its grace (a second of real time), at the latest at its stop.
  await advance(60);
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  const written = JSON.parse(readFileSync(report, 'utf8')) as { data: Deviation[] };
  const late = written.data.slice(reported);
  expect(late.map((d) => `${d.check} ${d.method} ${d.path}`)).toEqual([`callbacks.arrival.deadline GET /v1/tasks/${ids[0] ?? ''}`]);
  expect(late[0]?.message).toContain('within 30 s of the deployment');
  expect(output).toMatch(/proxy stopped: \d+ exchanges checked/);
  await hook.close();
}, 30_000);
