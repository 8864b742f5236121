import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadDocument } from '../../src/contract/index.ts';
import { EVENT_ORDER } from '../../src/conformance/stream-order.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { CHECKS } from '../../src/observed/index.ts';
import { LIFECYCLE_CHECKS } from '../../src/observed/lifecycle.ts';
import { POINTS_CHECKS } from '../../src/observed/points.ts';
import { PROXY_CHECKS, proxyJunitXml } from '../../src/proxy/index.ts';
import type { Deviation, Proxy } from '../../src/proxy/index.ts';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';

// The proxy's checks of stream order and of tasks across exchanges, and its JUnit report: in front of the emulator,
// which conforms, nothing deviates; in front of a server of this file's own, each rule is broken once on purpose.

const ADMIN = 'checks-admin';
const REQUEST_ID = 'req_bbbbbbbbbbbbbbbbbbbbbbbb';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/checks', agree: true } };
const MIDSTREAM = { 'X-Emulator-Scenario': 'text-service-unavailable-midstream' };
const PROMPT = 'How should I plan a small project?';
const STREAMS = {
  chat: ['/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true }, max_tokens: 64 }],
  responses: ['/v1/responses', { model: 'svc-text-pro', input: PROMPT, stream: true, max_output_tokens: 64 }],
  messages: ['/v1/messages', { model: 'svc-text-pro', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }], stream: true }],
} as const;

let emulator: Emulator;
let direct: string;
let key: string;
/** The emulator's own answers, which the deviating server serves with one thing changed. */
const real: { streams: Record<string, { text: string; headers: Record<string, string> }>; tasks: Record<string, Record<string, unknown>> } = { streams: {}, tasks: {} };

function api(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const all: Record<string, string> = { Authorization: `Bearer ${key}`, ...headers };
  if (body !== undefined) all['Content-Type'] = 'application/json';
  return fetch(`${base}${path}`, { method, headers: all, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function control(path: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${direct}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

const advance = (seconds: number): Promise<unknown> => control('/_emulator/clock/advance', { seconds });
const json = async (res: Response): Promise<Record<string, unknown>> => (await res.json()) as Record<string, unknown>;

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  direct = await emulator.listen(0);
  const account = await control('/_emulator/accounts', { points: '100000.000' });
  key = String((await control(`/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
  for (const [format, [path, body]] of Object.entries(STREAMS)) {
    const res = await api(direct, 'POST', path, body);
    const headers = Object.fromEntries(['content-type', 'cache-control', 'x-accel-buffering'].map((h) => [h, res.headers.get(h) ?? '']));
    real.streams[format] = { text: await res.text(), headers };
    const broken = await api(direct, 'POST', path, body, MIDSTREAM);
    real.streams[`${format}-midstream`] = { text: await broken.text(), headers };
  }
  const submitted = await json(await api(direct, 'POST', '/v1/tasks', NOTES));
  real.tasks['queued'] = submitted;
  await advance(2);
  real.tasks['processing'] = await json(await api(direct, 'GET', `/v1/tasks/${String(submitted['id'])}`));
  await advance(10);
  real.tasks['succeeded'] = await json(await api(direct, 'GET', `/v1/tasks/${String(submitted['id'])}`));
  const queued = await json(await api(direct, 'POST', '/v1/tasks', NOTES));
  real.tasks['canceled'] = await json(await api(direct, 'POST', `/v1/tasks/${String(queued['id'])}/cancel`));
  expect(Object.values(real.tasks).map((t) => t['status'])).toEqual(['queued', 'processing', 'succeeded', 'canceled']);
});
afterAll(() => emulator.close());

const running = closedAfterEach();

it('in front of the emulator: streams of the three formats, whole, cut at the maximum and broken off by an error, keep their order', async () => {
  const { proxy, url, lines } = await startProxy(direct, running);
  const endings: string[] = [];
  for (const [format, [path, body]] of Object.entries(STREAMS)) {
    const cut = format === 'chat' ? { max_tokens: 2 } : format === 'responses' ? { max_output_tokens: 2 } : { max_tokens: 2 };
    const noUsage = format === 'chat' ? { stream_options: { include_usage: false } } : {};
    for (const [variant, extra, headers] of [
      ['whole', noUsage, {}],
      ['cut', cut, {}],
      ['error', {}, MIDSTREAM],
    ] as const) {
      const res = await api(url, 'POST', path, { ...body, ...extra }, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const text = await res.text();
      // What each stream ends with, so the variants are known to be what they claim.
      const ending = /"finish_reason":"(\w+)"|event: (response\.\w+|error)\n|"stop_reason":"(\w+)"/g;
      const last = [...text.matchAll(ending)].at(-1);
      endings.push(`${format} ${variant} ${last?.[1] ?? last?.[2] ?? last?.[3] ?? (text.includes('"code":"service_unavailable"') ? 'error' : '?')}`);
    }
  }
  expect(endings).toEqual([
    'chat whole stop',
    'chat cut length',
    'chat error error',
    'responses whole response.completed',
    'responses cut response.incomplete',
    'responses error error',
    'messages whole end_turn',
    'messages cut max_tokens',
    'messages error error',
  ]);
  await proxy.settled();
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
  expect(proxy.exchanges()).toBe(9);
}, 30_000);

it('in front of the emulator: a task polled to its end and a canceled one go only forward, with points that add up', async () => {
  const { proxy, url, lines } = await startProxy(direct, running);
  const seen: string[] = [];
  const read = async (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Record<string, unknown>> => {
    const res = await api(url, method, path, body, headers);
    expect(res.status, `${method} ${path}`).toBe(200);
    const answer = await json(res);
    seen.push(String(answer['status'] ?? (answer['data'] as { status: string }[]).map((t) => t.status).join(',')));
    return answer;
  };

  const task = await read('POST', '/v1/tasks', NOTES);
  await read('GET', `/v1/tasks/${String(task['id'])}`);
  await advance(2);
  await read('GET', `/v1/tasks/${String(task['id'])}`);
  await advance(10);
  const done = await read('GET', `/v1/tasks/${String(task['id'])}`);
  expect(done['points']).toEqual({ frozen: '40.000', charged: '40.000', refunded: '0.000' });
  await read('GET', `/v1/tasks/${String(task['id'])}`);

  const cancelable = await read('POST', '/v1/tasks', NOTES, { 'X-Emulator-Scenario': 'cancelable' });
  await advance(6);
  await read('GET', `/v1/tasks/${String(cancelable['id'])}`);
  const canceled = await read('POST', `/v1/tasks/${String(cancelable['id'])}/cancel`);
  expect(canceled['points']).toEqual({ frozen: '40.000', charged: '0.000', refunded: '40.000' });
  await read('GET', `/v1/tasks/${String(cancelable['id'])}`);
  await read('GET', '/v1/tasks?limit=2');

  expect(seen).toEqual(['queued', 'queued', 'processing', 'succeeded', 'succeeded', 'queued', 'processing', 'canceled', 'canceled', 'canceled,succeeded']);
  await proxy.settled();
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
  expect(proxy.exchanges()).toBe(10);
}, 30_000);

/** Server-sent events as blocks of lines, and back. */
const blocks = (text: string): string[] => text.split('\n\n').filter((b) => b.trim() !== '');
const joined = (parts: string[]): string => parts.map((b) => `${b}\n\n`).join('');
const named = (name: string) => (block: string): boolean => block.startsWith(`event: ${name}\n`);

/** Beijing time `seconds` from now, whole seconds, as the service writes times. */
const beijing = (seconds: number): string => `${new Date(Date.now() + seconds * 1000 + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;

/** The deviating upstream: answers as the emulator's, but for one thing each, chosen by route and header. */
function deviatingUpstream(): Promise<string> {
  const served = new Map<string, number>();
  const task = (state: string, changes: Record<string, unknown>): Record<string, unknown> => ({ ...real.tasks[state], ...changes });
  const failed = { status: 'failed', output: null, error: { code: 'generation_failed', message: 'failed on purpose' }, points: { frozen: '40.000', charged: '0.000', refunded: '40.000' } };
  // Per route, what each request in turn answers (the last again once they run out).
  const tasks: Record<string, Record<string, unknown>[]> = {
    // Created two minutes ago and started one minute ago, as the first read shows; then read queued again.
    'GET /v1/tasks/T261123090000BACK01': [
      task('processing', { id: 'T261123090000BACK01', created_at: beijing(-120), started_at: beijing(-60) }),
      task('queued', { id: 'T261123090000BACK01', created_at: beijing(-120) }),
    ],
    'GET /v1/tasks/T261123090000FLIP01': [task('succeeded', { id: 'T261123090000FLIP01' }), task('succeeded', { id: 'T261123090000FLIP01', ...failed })],
    'GET /v1/tasks/T261123090000SUM001': [task('succeeded', { id: 'T261123090000SUM001', points: { frozen: '40.000', charged: '30.000', refunded: '0.000' } })],
    // Settled twice: each answer adds up, but the second is not what the first said.
    'GET /v1/tasks/T261123090000CHNG01': [task('succeeded', { id: 'T261123090000CHNG01' }), task('succeeded', { id: 'T261123090000CHNG01', points: { frozen: '40.000', charged: '35.000', refunded: '5.000' } })],
    'GET /v1/tasks/T261123090000FAIL01': [task('succeeded', { id: 'T261123090000FAIL01', ...failed, points: { frozen: '40.000', charged: '10.000', refunded: '30.000' } })],
    // Charged beyond the freeze: collected, nothing refunded. This adds up, but is not the model's price.
    'GET /v1/tasks/T261123090000MORE01': [task('succeeded', { id: 'T261123090000MORE01', points: { frozen: '1188.000', charged: '1300.000', refunded: '0.000' } })],
    'POST /v1/tasks/T261123090000CANC01/cancel': [task('canceled', { id: 'T261123090000CANC01' })],
    'GET /v1/tasks?status=processing': [
      { object: 'list', data: [task('processing', { id: 'T261123090000CANC01', created_at: real.tasks['canceled']?.['created_at'], started_at: real.tasks['canceled']?.['created_at'] })], page: 1, limit: 20, has_more: false },
    ],
  };
  const streams: Record<string, () => { format: string; events: string[] }> = {
    'POST /v1/chat/completions': () => {
      // The usage chunk before the chunk with finish_reason.
      const events = blocks(real.streams['chat']?.text ?? '');
      const [usage] = events.splice(-2, 1);
      events.splice(-2, 0, usage ?? '');
      return { format: 'chat', events };
    },
    'POST /v1/responses': () => {
      const events = blocks(real.streams['responses']?.text ?? '');
      const [part] = events.splice(events.findIndex(named('response.content_part.added')), 1);
      events.splice(events.findIndex(named('response.output_item.added')), 0, part ?? '');
      return { format: 'responses', events };
    },
    'POST /v1/messages': () => ({ format: 'messages', events: blocks(real.streams['messages']?.text ?? '').filter((b) => !named('ping')(b)) }),
    // An error event with a code the reference does not name for one (its request_id the deviating server's own).
    'POST /v1/messages bad-error': () => ({ format: 'messages', events: blocks((real.streams['messages-midstream']?.text ?? '').replaceAll('service_unavailable', 'rate_limited').replace(/req_[a-z0-9]{24}/g, REQUEST_ID)) }),
  };
  const answerJson = (res: ServerResponse, body: unknown): void =>
    void res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    req.resume();
    const route = `${req.method} ${req.url}`;
    const stream = streams[`${route}${req.headers['x-deviate'] ? ` ${String(req.headers['x-deviate'])}` : ''}`];
    if (stream) {
      const { format, events } = stream();
      res.writeHead(200, { ...real.streams[format]?.headers, 'X-Request-Id': REQUEST_ID }).end(joined(events));
      return;
    }
    const answers = tasks[route];
    if (answers) {
      const n = served.get(route) ?? 0;
      served.set(route, n + 1);
      return answerJson(res, answers[Math.min(n, answers.length - 1)]);
    }
    res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID }).end(JSON.stringify({ error: { code: 'internal', message: `no route ${route}`, request_id: REQUEST_ID } }));
  });
  return listenLocal(server, running);
}

/** Each request of the deviating run, in order, and the deviations it should give. */
const DEVIATING: [string, string, Record<string, string>, string[]][] = [
  ['POST', '/v1/chat/completions', {}, ['text.chat.stream.order']],
  ['POST', '/v1/responses', {}, ['text.responses.stream.order']],
  ['POST', '/v1/messages', {}, ['text.messages.stream.order']],
  ['POST', '/v1/messages', { 'X-Deviate': 'bad-error' }, ['text.messages.stream.order']],
  ['GET', '/v1/tasks/T261123090000BACK01', {}, []],
  // Queued again, and so read queued well after it started.
  ['GET', '/v1/tasks/T261123090000BACK01', {}, ['lifecycle.status.forward-only', LIFECYCLE_CHECKS.afterStart.id]],
  ['GET', '/v1/tasks/T261123090000FLIP01', {}, []],
  ['GET', '/v1/tasks/T261123090000FLIP01', {}, ['lifecycle.status.forward-only']],
  ['GET', '/v1/tasks/T261123090000SUM001', {}, ['billing.points.settled', POINTS_CHECKS.price.id]],
  // The same wrong points again: said once, when first seen.
  ['GET', '/v1/tasks/T261123090000SUM001', {}, []],
  ['GET', '/v1/tasks/T261123090000FAIL01', {}, ['billing.points.settled']],
  ['GET', '/v1/tasks/T261123090000CHNG01', {}, []],
  ['GET', '/v1/tasks/T261123090000CHNG01', {}, ['billing.points.settled']],
  ['GET', '/v1/tasks/T261123090000MORE01', {}, [POINTS_CHECKS.price.id]],
  ['POST', '/v1/tasks/T261123090000CANC01/cancel', {}, []],
  ['GET', '/v1/tasks?status=processing', {}, ['lifecycle.status.forward-only']],
];

async function deviatingRun(): Promise<{ proxy: Proxy; upstream: string; data: Deviation[] }> {
  const upstream = await deviatingUpstream();
  const { proxy, url } = await startProxy(upstream, running);
  for (const [method, path, headers] of DEVIATING) {
    const format = Object.values(STREAMS).find(([p]) => p === path);
    const res = await api(url, method, path, format?.[1], headers);
    expect(res.status, `${method} ${path}`).toBe(200);
    await res.arrayBuffer();
  }
  await proxy.settled();
  return { proxy, upstream, data: proxy.deviations() };
}

it('in front of a deviating server: a stream out of order in each format, a task that goes back and points that do not add up each deviate once', async () => {
  const { proxy, data } = await deviatingRun();
  expect(data.map((d) => `${d.check} ${d.method} ${d.path}`)).toEqual(DEVIATING.flatMap(([method, path, , checks]) => checks.map((c) => `${c} ${method} ${path}`)));
  expect(proxy.exchanges()).toBe(DEVIATING.length);

  const messages = data.map((d) => d.message);
  expect(messages).toEqual([
    expect.stringMatching(/^a last chunk with empty choices and usage \(expected usage chunk, got \{.*"finish_reason":"stop"/),
    'event 2 is response.output_item.added (expected response.output_item.added, got response.content_part.added)',
    'event 2 is ping (expected ping, got content_block_delta)',
    'a mid-stream error has the error body of the format and a documented code (expected service_unavailable|content_rejected|invalid_params, got rate_limited)',
    // The shared checker's words (src/observed), each naming the task and the requests it rests on.
    expect.stringMatching(/^task T261123090000BACK01 was processing \(req_b+\) and then queued \(req_b+\)$/),
    expect.stringMatching(/^task T261123090000BACK01 read queued \(req_b+\) after its started_at \S+\+08:00 \(req_b+\)$/),
    expect.stringMatching(/^task T261123090000FLIP01 was succeeded \(req_b+\) and then failed \(req_b+\)$/),
    expect.stringMatching(/^succeeded task T261123090000SUM001 \(req_b+\): .*refunded 10\.000.*charged 30\.000, refunded 0\.000$/),
    expect.stringMatching(/^succeeded task T261123090000SUM001 \(req_b+\) charged 30\.000, its price is 40\.000$/),
    expect.stringMatching(/^failed task T261123090000FAIL01 \(req_b+\): .*charged 10\.000, refunded 30\.000$/),
    expect.stringMatching(/^the points of succeeded task T261123090000CHNG01 changed after it finished: .*charged 40\.000.* then .*charged 35\.000, refunded 5\.000/),
    expect.stringMatching(/^succeeded task T261123090000MORE01 \(req_b+\) charged 1300\.000, its price is 40\.000$/),
    expect.stringMatching(/^task T261123090000CANC01 was canceled \(req_b+\) and then processing \(req_b+\)$/),
  ]);
  for (const d of data) {
    expect(d.request_id).toBe(REQUEST_ID);
    // A rule across answers names the requests it rests on; an answer's own check, none but its own.
    if (!d.check.startsWith('text.')) expect(d.request_ids).toEqual([REQUEST_ID]);
    expect(d.curl).toMatch(new RegExp(`^curl -sS -X ${d.method} 'http://127\\.0\\.0\\.1:\\d+${d.path.replace(/[.?]/g, '\\$&')}' -H 'authorization: Bearer sk-REDACTED'`));
  }
}, 30_000);

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/**
 * A rough XML reader, enough to hold the report to: tags balanced, attributes quoted, no bare `<` or `&` in text,
 * no character XML 1.0 cannot hold; entities undone.
 */
function readXml(xml: string): XmlElement {
  expect([...xml].filter((c) => c.charCodeAt(0) < 32 && !'\t\n\r'.includes(c))).toEqual([]);
  const unescape = (text: string): string => {
    expect(text).not.toMatch(/&(?!(lt|gt|amp|quot|apos);)/);
    return text.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ENTITIES[e] ?? '');
  };
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const stack = [root];
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
  const body = xml.slice(xml.indexOf('\n') + 1);
  let at = 0;
  for (const m of body.matchAll(/<(\/?)([\w.-]+)((?:\s+[\w.-]+="[^"<]*")*)\s*(\/?)>/g)) {
    const text = body.slice(at, m.index);
    expect(text).not.toContain('<');
    const open = stack.at(-1) as XmlElement;
    open.text += unescape(text);
    at = m.index + m[0].length;
    const [, closing, name = '', attributes = '', selfClosing] = m;
    if (closing) {
      expect(stack.pop()?.name).toBe(name);
      continue;
    }
    const element: XmlElement = { name, attributes: Object.fromEntries([...attributes.matchAll(/([\w.-]+)="([^"]*)"/g)].map(([, k = '', v = '']) => [k, unescape(v)])), children: [], text: '' };
    open.children.push(element);
    if (!selfClosing) stack.push(element);
  }
  expect(body.slice(at).trim()).toBe('');
  expect(stack.map((e) => e.name)).toEqual(['#document']);
  return root;
}

const child = (element: XmlElement | undefined, name: string): XmlElement[] => (element?.children ?? []).filter((c) => c.name === name);

it('the JUnit report has one case per check, failing with each deviation and its curl line, and the count of exchanges', async () => {
  const { proxy, upstream, data } = await deviatingRun();
  const xml = proxyJunitXml({ upstream, exchanges: proxy.exchanges(), deviations: data });
  const [suites] = child(readXml(xml), 'testsuites');
  const [suite] = child(suites, 'testsuite');
  const tests = String(PROXY_CHECKS.length);
  expect(suite?.attributes).toMatchObject({ name: 'proxy', tests, failures: '7' });
  expect(suites?.attributes).toMatchObject({ tests, failures: '7' });
  const cases = child(suite, 'testcase');
  expect(cases.map((c) => c.attributes['name'])).toEqual([...PROXY_CHECKS]);
  // Each answer's checks, the stream orders, every rule of the shared checker but the one each answer already
  // checks (task times in Beijing time), the upstream timeout, and the relayed callbacks' deadline.
  expect(PROXY_CHECKS).toEqual([
    'wire.status.no-5xx',
    'wire.request-id.every-answer',
    'wire.schema.response',
    'wire.error-shape.body',
    'wire.error-code.status',
    'wire.points.decimal',
    'wire.time.beijing',
    'text.chat.stream.order',
    'text.responses.stream.order',
    'text.messages.stream.order',
    ...CHECKS.map((c) => c.id).filter((id) => id !== 'wire.time.beijing'),
    'wire.upstream.timeout',
    'callbacks.arrival.deadline',
  ]);
  expect(PROXY_CHECKS).toEqual(expect.arrayContaining(['lifecycle.status.forward-only', 'billing.points.settled', 'callbacks.signature.verifies']));
  const failing = Object.fromEntries(
    cases.flatMap((c) => child(c, 'failure').map((f) => [c.attributes['name'], f.text.split('\n').filter((l) => l.startsWith('  repro: curl -sS ')).length])),
  );
  expect(failing).toEqual({
    'text.chat.stream.order': 1,
    'text.responses.stream.order': 1,
    'text.messages.stream.order': 2,
    'lifecycle.status.forward-only': 3,
    [LIFECYCLE_CHECKS.afterStart.id]: 1,
    'billing.points.settled': 3,
    [POINTS_CHECKS.price.id]: 2,
  });
  // One failure element per failing case, none in a passing one.
  expect(cases.map((c) => child(c, 'failure').length)).toEqual(cases.map((c) => (failing[c.attributes['name'] ?? ''] ? 1 : 0)));
  const points = child(cases.find((c) => c.attributes['name'] === 'billing.points.settled'), 'failure')[0];
  expect(points?.attributes['message']).toMatch(/^3 deviations; first: succeeded task T261123090000SUM001 /);
  expect(points?.text.split('\n')[0]).toBe(`GET /v1/tasks/T261123090000SUM001 answered 200 (request id ${REQUEST_ID}): ${data.find((d) => d.check === 'billing.points.settled')?.message ?? ''}`);
  const properties = child(child(suite, 'properties')[0], 'property').map((p) => [p.attributes['name'], p.attributes['value']]);
  expect(Object.fromEntries(properties)).toEqual({ upstream, exchanges: String(DEVIATING.length), deviations: '13' });
}, 30_000);

it('the JUnit report escapes what an answer carries into a message, control characters included, and keeps a deviation of any check', () => {
  const odd: Deviation = { check: 'some.other.check', method: 'GET', path: '/v1/tasks?a=1&b=<2>', status: 500, request_id: null, message: 'body "x\u0001y" & \'z\'', curl: "curl -sS -X GET 'http://u/v1/tasks?a=1&b=<2>'" };
  const xml = proxyJunitXml({ upstream: 'http://u', exchanges: 1, deviations: [odd] });
  const [suite] = child(child(readXml(xml), 'testsuites')[0], 'testsuite');
  expect(suite?.attributes).toMatchObject({ tests: String(PROXY_CHECKS.length + 1), failures: '1' });
  const cases = child(suite, 'testcase');
  expect(cases).toHaveLength(PROXY_CHECKS.length + 1);
  const [failure] = child(cases.at(-1), 'failure');
  expect(cases.at(-1)?.attributes['name']).toBe('some.other.check');
  expect(failure?.attributes['message']).toBe('1 deviation; first: body "x\uFFFDy" & \'z\'');
  expect(failure?.text).toBe('GET /v1/tasks?a=1&b=<2> answered 500 (request id none): body "x\uFFFDy" & \'z\'\n  repro: curl -sS -X GET \'http://u/v1/tasks?a=1&b=<2>\'');
  const [empty] = child(child(readXml(proxyJunitXml({ upstream: 'http://u', exchanges: 0, deviations: [] })), 'testsuites')[0], 'testsuite');
  expect(empty?.attributes).toMatchObject({ tests: String(PROXY_CHECKS.length), failures: '0' });
});

it('the shared event order is the one openapi/service.yaml documents', () => {
  const doc = loadDocument('service') as unknown as { paths: Record<string, { post: { responses: { '200': { content: Record<string, { 'x-event-order': string[] }> } } } }> };
  const order = (path: string): string[] | undefined => doc.paths[path]?.post.responses['200'].content['text/event-stream']?.['x-event-order'];
  expect(order('/v1/responses')).toEqual(EVENT_ORDER.responses);
  expect(order('/v1/messages')).toEqual(EVENT_ORDER.messages);
});

it('in front of the emulator: a stream with no content delta, in each format, keeps the order', async () => {
  // A model may end before its first token; a recorded empty answer replays as one.
  await control('/_emulator/scenarios', { scenarios: [{ name: 'empty-answer', outcome: 'succeeded', text: { chunks: [] } }] });
  const { proxy, url, lines } = await startProxy(direct, running);
  const deltas: number[] = [];
  for (const [path, body] of Object.values(STREAMS)) {
    const res = await api(url, 'POST', path, body, { 'X-Emulator-Scenario': 'empty-answer' });
    expect(res.status).toBe(200);
    const text = await res.text();
    deltas.push([...text.matchAll(/"content":"[^"]|response\.output_text\.delta|content_block_delta/g)].length);
  }
  expect(deltas).toEqual([0, 0, 0]);
  await proxy.settled();
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
}, 30_000);

it('does not hold service_unavailable, for which the reference gives no HTTP status, to the emulator\'s 503', async () => {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID });
    res.end(JSON.stringify({ error: { code: req.url === '/v1/tasks/T261123090000UNAV01' ? 'service_unavailable' : 'not_found', message: 'down', request_id: REQUEST_ID } }));
  });
  const upstream = await listenLocal(server, running);
  const { proxy, url } = await startProxy(upstream, running);
  for (const id of ['T261123090000UNAV01', 'T261123090000NOTF01']) await (await api(url, 'GET', `/v1/tasks/${id}`)).arrayBuffer();
  await proxy.settled();
  const found = proxy.deviations().filter((d) => d.check.startsWith('wire.error-code') || d.check === 'wire.status.no-5xx');
  // A 5xx is a deviation of its own either way; only not_found has a documented status (404) to miss.
  expect(found.map((d) => `${d.check} ${d.path}`)).toEqual([
    'wire.status.no-5xx /v1/tasks/T261123090000UNAV01',
    'wire.status.no-5xx /v1/tasks/T261123090000NOTF01',
    'wire.error-code.status /v1/tasks/T261123090000NOTF01',
  ]);
});

it('in front of the emulator: a non-streamed text call broken off by a service fault, answered 503 service_unavailable in its format\'s error shape, is no deviation', async () => {
  const { proxy, url, lines } = await startProxy(direct, running);
  const answers: string[] = [];
  for (const [path, body] of Object.values(STREAMS)) {
    const res = await api(url, 'POST', path, { ...body, stream: false }, MIDSTREAM);
    const json = (await res.json()) as { type?: string; error: { code: string; type: string } };
    answers.push(`${res.status} ${json.type ?? '-'} ${json.error.code} ${json.error.type}`);
  }
  expect(answers).toEqual(['503 - service_unavailable service_unavailable', '503 - service_unavailable service_unavailable', '503 error service_unavailable service_unavailable']);
  await proxy.settled();
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
}, 30_000);

it('still holds a 503 to be a deviation when it is of another code, of a streamed call, or not in the format\'s shape', async () => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { case: string };
      const error = { chat: { code: 'service_unavailable', type: 'service_unavailable' }, other: { code: 'overloaded', type: 'overloaded' }, streamed: { code: 'service_unavailable', type: 'service_unavailable' } }[sent.case];
      // A Messages answer without its `type: 'error'`: the general shape, not the format's.
      const body = sent.case === 'shape' ? { error: { code: 'service_unavailable', type: 'service_unavailable', message: 'down', request_id: REQUEST_ID } } : { error: { ...error, message: 'down', param: null, request_id: REQUEST_ID } };
      res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID }).end(JSON.stringify(body));
    });
  });
  const upstream = await listenLocal(server, running);
  const { proxy, url } = await startProxy(upstream, running);
  for (const [path, sent] of [
    ['/v1/chat/completions', { case: 'chat' }],
    ['/v1/chat/completions', { case: 'other' }],
    ['/v1/responses', { case: 'streamed', stream: true }],
    ['/v1/messages', { case: 'shape' }],
  ] as const) {
    await (await api(url, 'POST', path, sent)).arrayBuffer();
  }
  await proxy.settled();
  const fivexx = proxy.deviations().filter((d) => d.check === 'wire.status.no-5xx');
  expect(fivexx.map((d) => `${d.path} ${JSON.parse(d.curl.replace(/^.*--data-raw '(.*)'$/, '$1')).case as string}`)).toEqual([
    '/v1/chat/completions other',
    '/v1/responses streamed',
    '/v1/messages shape',
  ]);
});
