import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ALL_CHECKS, matchesGlob, runConformance } from '../../src/conformance/index.ts';
import type { CheckResult, SuiteReport } from '../../src/conformance/index.ts';
import { failingAddress, startCallbackReceiver } from '../../src/conformance/receiver.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// The checks that set up what they exercise (a failed, timed-out or processing-canceled task, an upload, each
// limit, a callback retry) pass against the emulator, fail against a server that alters the answer they exist to
// judge, and are skipped, saying why, where they need the control API and it is not given.

const ADMIN = 'exercise-admin';
const EXERCISE = ['exercise.*'];
const EXERCISE_IDS = ALL_CHECKS.filter((c) => matchesGlob(c.id, 'exercise.*')).map((c) => c.id);

let emulator: Emulator;
let base: string;
const closing: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  base = await emulator.listen(0);
});

afterEach(async () => {
  for (const item of closing.splice(0).reverse()) await item.close();
  await emulator.close();
});

// A server in front of the emulator (the control API too) that may alter a request or an answer, byte-exact otherwise.

interface Exchanged {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Alter {
  /** A new request body (JSON text) for this request, or undefined to forward it as sent. */
  request?(method: string, path: string, body: Buffer): Buffer | undefined;
  /** A new answer for this request, or undefined to give the emulator's. */
  answer?(answer: Exchanged): Exchanged | undefined;
}

const SKIP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

const headersOf = (headers: IncomingHttpHeaders | Headers): Record<string, string> => {
  const out: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) if (value !== undefined && !SKIP.has(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
};

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<string> {
  const server = createServer((req, res) => void handle(req, res).catch((err: unknown) => res.writeHead(502).end(String(err))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Forwards to `target`; `alter` may change what goes and what comes back. Logs what it altered. */
async function startAltering(target: string, alter: Alter): Promise<{ url: string; altered: string[] }> {
  const altered: string[] = [];
  const url = await listen(async (req, res) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const sent = await readBody(req);
    const changed = alter.request?.(method, path, sent);
    const headers = headersOf(req.headers);
    const body = changed ?? sent;
    const upstream = await fetch(`${target}${path}`, { method, headers, ...(body.length > 0 ? { body } : {}) });
    const plain: Exchanged = { method, path, status: upstream.status, headers: headersOf(upstream.headers), body: Buffer.from(await upstream.arrayBuffer()) };
    const answer = alter.answer?.({ ...plain, headers: { ...plain.headers }, body: Buffer.from(plain.body) }) ?? plain;
    if (changed || answer !== plain) altered.push(`${method} ${path}`);
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  return { url, altered };
}

function editJson(answer: Exchanged, edit: (body: Record<string, unknown>) => void): Exchanged {
  const body = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
  edit(body);
  return { ...answer, body: Buffer.from(JSON.stringify(body)) };
}

const run = (url: string, only: string[]): Promise<SuiteReport> => runConformance({ baseUrl: url, admin: { url, token: ADMIN }, only });

const statusOf = (report: SuiteReport): Record<string, string> => Object.fromEntries(report.results.map((r) => [r.id, r.status]));

function failureOf(report: SuiteReport, id: string): NonNullable<CheckResult['failure']> {
  const result = report.results.find((r) => r.id === id);
  expect(result?.status, `${id}: ${JSON.stringify(result)}`).toBe('failed');
  if (!result?.failure) throw new Error(`${id} has no failure`);
  return result.failure;
}

it('passes every exercise check against the emulator with the control API and a receiver', async () => {
  const report = await run(base, EXERCISE);
  expect(report.results.map((r) => [r.id, r.status, r.failure?.message ?? r.reason])).toEqual(EXERCISE_IDS.map((id) => [id, 'passed', undefined]));
  expect(EXERCISE_IDS).toHaveLength(12);

  // They did meet what they exercise: the suite's account holds failed, timed-out and canceled tasks.
  const res = await fetch(`${base}/_emulator/tasks?account=${report.account?.id ?? ''}&limit=100`, { headers: { Authorization: `Bearer ${ADMIN}` } });
  const tasks = ((await res.json()) as { data: { task: { status: string; error: { code: string } | null } }[] }).data;
  const ends = new Set(tasks.map(({ task }) => `${task.status} ${task.error?.code ?? ''}`.trim()));
  for (const end of ['failed generation_failed', 'failed service_unavailable', 'failed timeout', 'canceled canceled', 'succeeded']) expect(ends).toContain(end);
});

it('fails the failure and timeout checks when a failed task is not refunded', async () => {
  const { url, altered } = await startAltering(base, {
    answer(answer) {
      if (answer.method !== 'GET' || !/^\/v1\/tasks\/T/.test(answer.path) || answer.status !== 200) return undefined;
      const task = JSON.parse(answer.body.toString('utf8')) as { status: string };
      if (task.status !== 'failed') return undefined;
      return editJson(answer, (body) => {
        const points = body['points'] as Record<string, string>;
        body['points'] = { ...points, charged: points['frozen'] ?? '0.000', refunded: '0.000' };
      });
    },
  });
  const only = ['exercise.tasks.failed-*', 'exercise.tasks.timeout'];
  const report = await run(url, only);
  expect(altered.length).toBeGreaterThan(0);
  expect(statusOf(report)).toEqual({ 'exercise.tasks.failed-processing': 'failed', 'exercise.tasks.failed-queued': 'failed', 'exercise.tasks.timeout': 'failed' });
  for (const id of Object.keys(statusOf(report))) {
    const failure = failureOf(report, id);
    expect(failure.message).toBe('nothing charged');
    expect(failure.request?.method).toBe('GET');
    expect(failure.request?.path).toMatch(/^\/v1\/tasks\/T\d{12}[A-Z0-9]{6}$/);
    expect(failure.expected).toBe('0.000');
  }
});

it('fails the rate and concurrency checks when a limit is answered 429 with another code', async () => {
  const { url, altered } = await startAltering(base, {
    answer(answer) {
      if (answer.status !== 429) return undefined;
      return editJson(answer, (body) => {
        (body['error'] as Record<string, unknown>)['code'] = 'too_many_requests';
      });
    },
  });
  const report = await run(url, ['exercise.limits.rate', 'exercise.limits.concurrency']);
  expect(altered.length).toBeGreaterThan(0);
  expect(statusOf(report)).toEqual({ 'exercise.limits.rate': 'failed', 'exercise.limits.concurrency': 'failed' });
  const failure = failureOf(report, 'exercise.limits.rate');
  expect(failure).toMatchObject({ message: 'error.code is rate_limited', request: { method: 'GET', path: '/v1/tasks?limit=1' }, expected: 'rate_limited', actual: 'too_many_requests' });
  expect(failure.request?.requestId).toMatch(/^req_[a-z0-9]{24}$/);
  expect(failureOf(report, 'exercise.limits.concurrency')).toMatchObject({ message: 'error.code is concurrency_limited', request: { method: 'POST', path: '/v1/tasks' } });
});

it('fails the cancel check when a processing task is canceled without its refund', async () => {
  const { url, altered } = await startAltering(base, {
    answer(answer) {
      if (answer.method !== 'POST' || !/^\/v1\/tasks\/T\w+\/cancel$/.test(answer.path) || answer.status !== 200) return undefined;
      return editJson(answer, (body) => {
        body['points'] = { ...(body['points'] as Record<string, string>), refunded: '0.000' };
      });
    },
  });
  const report = await run(url, ['exercise.tasks.cancel-processing']);
  expect(altered.length).toBeGreaterThan(0);
  expect(failureOf(report, 'exercise.tasks.cancel-processing')).toMatchObject({ message: 'refunded = frozen (a full refund)', request: { method: 'POST' }, expected: '40.000', actual: '0.000' });
});

it('fails the cancel check when a processing task is refused with a code the reference does not give', async () => {
  const { url } = await startAltering(base, {
    answer(answer) {
      if (answer.status !== 409 || !answer.path.endsWith('/cancel')) return undefined;
      return editJson(answer, (body) => {
        (body['error'] as Record<string, unknown>)['code'] = 'task_running';
      });
    },
  });
  const report = await run(url, ['exercise.tasks.cancel-processing']);
  expect(failureOf(report, 'exercise.tasks.cancel-processing')).toMatchObject({
    message: 'a processing task is canceled (200) or refused with 409 task_not_cancelable',
    expected: '200 canceled or 409 task_not_cancelable',
    actual: '409 task_running',
  });
});

it('fails the retry check when a retry comes with a new webhook-id', async () => {
  // The callbacks go through a relay that gives every retry of a message a webhook-id of its own.
  const seen = new Set<string>();
  const relay = await listen(async (req, res) => {
    const body = await readBody(req);
    const headers = headersOf(req.headers);
    const id = headers['webhook-id'] ?? '';
    if (seen.has(id)) headers['webhook-id'] = `${id}r${seen.size}`;
    seen.add(id);
    const target = decodeURIComponent((req.url ?? '/').slice(1));
    const answered = await fetch(target, { method: 'POST', headers, body });
    res.writeHead(answered.status).end(await answered.text());
  });
  const { url, altered } = await startAltering(base, {
    request(method, path, body) {
      if (method !== 'POST' || path !== '/v1/tasks') return undefined;
      const payload = JSON.parse(body.toString('utf8')) as { webhook_url?: string };
      if (!payload.webhook_url) return undefined;
      return Buffer.from(JSON.stringify({ ...payload, webhook_url: `${relay}/${encodeURIComponent(payload.webhook_url)}` }));
    },
  });
  const report = await run(url, ['exercise.callbacks.retry-same-id']);
  expect(altered).toEqual(['POST /v1/tasks']);
  const failure = failureOf(report, 'exercise.callbacks.retry-same-id');
  expect(failure.message).toBe('every delivery carries the same webhook-id (msg_…)');
  expect(failure.request).toMatchObject({ method: 'POST', path: '/v1/tasks' });
  expect(failure.actual).toEqual([failure.expected, `${String(failure.expected)}r1`, `${String(failure.expected)}r1`]);
});

it('without the control API, skips the checks that need it, saying so, and still runs the upload and the consequences', async () => {
  const report = await runConformance({ baseUrl: base, apiKey: 'sk-emulator-demo', only: EXERCISE });
  const byId = Object.fromEntries(report.results.map((r) => [r.id, r]));
  // The upload, and the claims and refusals held to later reads (without balances: those need the control API).
  const without = ['exercise.files.upload-download', 'exercise.consequences.claims', 'exercise.consequences.refusals'];
  for (const id of without) expect(byId[id]?.status, id).toBe('passed');
  const skipped = report.results.filter((r) => r.status === 'skipped');
  expect(skipped.map((r) => r.id)).toEqual(EXERCISE_IDS.filter((id) => !without.includes(id)));
  for (const r of skipped) expect(r.reason).toBe('needs the control API (--admin-url, --admin-token)');
  expect(report.failed).toBe(0);
});

it('the receiver fails the first N requests to a failing address, and what it was told to fail, and 200 otherwise', async () => {
  const receiver = await startCallbackReceiver(0);
  closing.push(receiver);
  const root = `http://127.0.0.1:${receiver.port}/`;
  const post = async (to: string): Promise<number> => (await fetch(to, { method: 'POST', body: '{}' })).status;
  const failing = failingAddress(root, 2, 'a b');
  expect(failing).toBe(`${root}fail-first/2/a%20b`);
  expect([await post(failing), await post(failing), await post(failing), await post(root)]).toEqual([500, 500, 200, 200]);
  receiver.fail(1, '/other');
  receiver.fail(1);
  expect([await post(root), await post(`${root}other`), await post(`${root}other`), await post(root)]).toEqual([500, 500, 200, 200]);
  expect(receiver.received.map((r) => [r.path, r.answered])).toEqual([
    ['/fail-first/2/a%20b', 500],
    ['/fail-first/2/a%20b', 500],
    ['/fail-first/2/a%20b', 200],
    ['/', 200],
    ['/', 500],
    ['/other', 500],
    ['/other', 200],
    ['/', 200],
  ]);
});
