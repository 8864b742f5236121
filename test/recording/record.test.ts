import Anthropic from '@anthropic-ai/sdk';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseSse } from '../../src/wire/index.ts';
import { createEmulator, signRequest } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import type { EndedExchange } from '../../src/wire/index.ts';
import { createRecorder, readRecording, redactHeaders, redactSecrets, redactSse, redactTaskInput, redactTextJson, xOut } from '../../src/recording/index.ts';
import type { Har, HarEntry } from '../../src/recording/index.ts';
import { textFingerprint, textFormatOf } from '../../src/text-formats/index.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

// The recorder behind a real proxy in front of the emulator: the official SDKs, tasks polled to the end and
// canceled, a key with signing on. The file is read back as text and searched for every secret and every prompt
// and answer the traffic carried.

const ADMIN = 'recording-admin';
const WEBHOOK_SECRET_LOOKALIKE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const WEBHOOK_TOKEN = 'hooktoken7f3a9c2e';
const PROMPTS = {
  chat: 'Plan a quiet garden for a rainy northern town',
  chatStream: 'Describe a lighthouse keeper morning routine',
  instructions: 'Answer like a patient carpentry teacher',
  responses: 'Explain how to sharpen a chisel by hand',
  system: 'You are a terse museum guide',
  message: 'Summarize the history of the astrolabe',
  messageStream: 'List three uses of beeswax in woodworking',
  signed: 'Compose a haiku about tidal pools',
  note: 'https://notes.example.com/n/private-orchard-diary',
  video: 'A red kite gliding over misty hills at dawn',
};

let emulator: Emulator;
let direct: string;
let key: string;
let signed: { key: string; secret: string };
let receiver: Receiver;

const control = async (path: string, body: object): Promise<Record<string, unknown>> => {
  const res = await fetch(`${direct}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
};

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  receiver = await startReceiver((_n, res) => res.writeHead(204).end());
  const account = await control('/_emulator/accounts', { points: '100000.000' });
  key = String((await control(`/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
  const withSigning = await control(`/_emulator/accounts/${String(account['id'])}/keys`, { signing: true });
  signed = { key: String(withSigning['key']), secret: String(withSigning['signing_secret']) };
  expect(signed.secret).toMatch(/^svs_/);
});
afterAll(async () => {
  await receiver.close();
  await emulator.close();
});

interface Task {
  id: string;
  model: string;
  status: string;
  output: { text?: string } | null;
}

/** Everything one run of traffic sent and got, as the clients saw it. */
interface Traffic {
  answers: { chat: string; chatStream: string; responses: string; message: string; messageStream: string; signed: string; notes: string };
  notes: Task;
  canceled: Task;
  signatureHeaders: Record<string, string>[];
}

async function traffic(url: string): Promise<Traffic> {
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
  const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
  // The Messages format's own header: x-api-key instead of Authorization (this SDK sends Authorization by default).
  const withApiKeyHeader = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, defaultHeaders: { 'x-api-key': key, Authorization: null } });
  const model = 'svc-text-pro';

  const chat = await openai.chat.completions.create({ model, max_tokens: 64, messages: [{ role: 'user', content: PROMPTS.chat }] });
  let chatStream = '';
  const stream = await openai.chat.completions.create({
    model,
    max_tokens: 64,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: [{ type: 'text', text: PROMPTS.chatStream }] }],
  });
  for await (const chunk of stream) chatStream += chunk.choices[0]?.delta.content ?? '';
  const responses = await openai.responses.stream({ model, instructions: PROMPTS.instructions, input: PROMPTS.responses, max_output_tokens: 64 }).finalResponse();

  const message = await anthropic.messages.create({ model, max_tokens: 64, system: PROMPTS.system, messages: [{ role: 'user', content: PROMPTS.message }] });
  const streamed = await withApiKeyHeader.messages
    .stream({ model, max_tokens: 64, system: [{ type: 'text', text: PROMPTS.system }], messages: [{ role: 'user', content: [{ type: 'text', text: PROMPTS.messageStream }] }] })
    .finalMessage();
  const textOf = (m: Anthropic.Message): string => m.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const advance = (seconds: number): Promise<Record<string, unknown>> => control('/_emulator/clock/advance', { seconds });

  const submitted = await api('POST', '/v1/tasks', {
    model: 'social-notes-data',
    input: { mode: 'note', note: PROMPTS.note, agree: true },
    webhook_url: `${receiver.url}/hooks/tasks?token=${WEBHOOK_TOKEN}`,
    metadata: { order: 'order-1187', hint: WEBHOOK_SECRET_LOOKALIKE },
  });
  expect(submitted.status).toBe(200);
  let notes = (await submitted.json()) as Task;
  for (let polls = 0; !['succeeded', 'failed', 'canceled'].includes(notes.status); polls++) {
    expect(polls, 'the notes task never ended').toBeLessThan(20);
    await advance(3);
    notes = (await (await api('GET', `/v1/tasks/${notes.id}`)).json()) as Task;
  }
  expect(notes.status).toBe('succeeded');
  expect(notes.output?.text?.length).toBeGreaterThan(20);

  const video = await api('POST', '/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: PROMPTS.video, resolution: '480p', duration: 4 } }, { 'X-Emulator-Scenario': 'cancelable' });
  expect(video.status).toBe(200);
  const queued = (await video.json()) as Task;
  expect((await api('POST', `/v1/tasks/${queued.id}/cancel`)).status).toBe(200);
  expect((await api('POST', `/v1/tasks/${queued.id}/cancel`)).status).toBe(409);
  const canceled = (await (await api('GET', `/v1/tasks/${queued.id}`)).json()) as Task;
  expect(canceled.status).toBe('canceled');

  // The key with signing on: a signed text call and a signed list.
  const signatureHeaders: Record<string, string>[] = [];
  const signedCall = async (method: string, path: string, body?: string): Promise<Response> => {
    const headers = signRequest({ secret: signed.secret, method, path, ...(body === undefined ? {} : { body }) });
    signatureHeaders.push(headers);
    return fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${signed.key}`, ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body }),
    });
  };
  const signedChat = await signedCall('POST', '/v1/chat/completions', JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: PROMPTS.signed }] }));
  expect(signedChat.status).toBe(200);
  const signedAnswer = ((await signedChat.json()) as OpenAI.Chat.ChatCompletion).choices[0]?.message.content ?? '';
  expect((await signedCall('GET', '/v1/tasks?limit=5')).status).toBe(200);

  return {
    answers: {
      chat: chat.choices[0]?.message.content ?? '',
      chatStream,
      responses: responses.output_text,
      message: textOf(message),
      messageStream: textOf(streamed),
      signed: signedAnswer,
      notes: notes.output?.text ?? '',
    },
    notes,
    canceled,
    signatureHeaders,
  };
}

/** A recorded run: the proxy between the clients and the emulator, every ended exchange also kept as it was. */
async function record(keepContent: boolean): Promise<{ dir: string; files: string[]; raw: string; har: Har; seen: Traffic; originals: EndedExchange[] }> {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-recording-')), 'out');
  const recorder = createRecorder({ dir, keepContent, upstream: direct });
  const originals: EndedExchange[] = [];
  const proxy = createProxy({
    upstream: direct,
    log: () => undefined,
    onExchange: (ended) => {
      originals.push(ended);
      recorder.onExchange(ended);
    },
  });
  const url = await proxy.listen(0);
  let seen: Traffic;
  try {
    seen = await traffic(url);
  } finally {
    await proxy.close();
  }
  const files = await recorder.close();
  expect(files).toHaveLength(1);
  const raw = readFileSync(files[0] ?? '', 'utf8');
  // Ordered by request start, as the recorder orders its entries.
  originals.sort((a, b) => a.startedMs - b.startedMs);
  return { dir, files, raw, har: JSON.parse(raw) as Har, seen, originals };
}

/** The HAR 1.2 fields a reader may count on, each of the right type; one line per problem. */
function harProblems(har: Har): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, what: string): void => void (ok || problems.push(what));
  const isNum = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
  const iso = (v: unknown): boolean => typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) && !Number.isNaN(Date.parse(v));
  const pairs = (v: unknown): boolean => Array.isArray(v) && v.every((p: { name?: unknown; value?: unknown }) => typeof p.name === 'string' && typeof p.value === 'string');
  need(har.log.version === '1.2', 'log.version');
  need(typeof har.log.creator.name === 'string' && typeof har.log.creator.version === 'string', 'log.creator');
  const pageIds = new Set<string>();
  har.log.pages.forEach((page, i) => {
    need(iso(page.startedDateTime) && typeof page.id === 'string' && typeof page.title === 'string' && typeof page.pageTimings === 'object', `pages[${i}]`);
    pageIds.add(page.id);
  });
  har.log.entries.forEach((e, i) => {
    const at = `entries[${i}]`;
    need(e.pageref === undefined || pageIds.has(e.pageref), `${at}.pageref names no page`);
    need(iso(e.startedDateTime), `${at}.startedDateTime`);
    need(isNum(e.time) && e.time >= 0 && e.time === e.timings.send + e.timings.wait + e.timings.receive, `${at}.time is the sum of its timings`);
    need([e.timings.send, e.timings.wait, e.timings.receive].every((t) => isNum(t) && t >= 0), `${at}.timings`);
    need(typeof e.cache === 'object' && e.cache !== null, `${at}.cache`);
    const q = e.request;
    need(typeof q.method === 'string' && /^https?:\/\//.test(q.url) && q.httpVersion === 'HTTP/1.1' && Array.isArray(q.cookies), `${at}.request`);
    need(pairs(q.headers) && pairs(q.queryString) && q.headersSize === -1 && isNum(q.bodySize), `${at}.request headers, query, sizes`);
    need(q.postData === undefined || (typeof q.postData.mimeType === 'string' && typeof q.postData.text === 'string'), `${at}.request.postData`);
    const r = e.response;
    need(isNum(r.status) && typeof r.statusText === 'string' && r.httpVersion === 'HTTP/1.1' && Array.isArray(r.cookies) && pairs(r.headers), `${at}.response`);
    need(isNum(r.content.size) && typeof r.content.mimeType === 'string' && r.redirectURL === '' && r.headersSize === -1 && isNum(r.bodySize), `${at}.response content, sizes`);
    need(r.content.text === undefined || typeof r.content.text === 'string', `${at}.response.content.text`);
  });
  return problems;
}

/** A text as it can sit in the file: as is, in a JSON string, in a JSON string inside a JSON string. */
function appears(raw: string, text: string): boolean {
  const once = JSON.stringify(text).slice(1, -1);
  return [text, once, JSON.stringify(once).slice(1, -1)].some((form) => raw.includes(form));
}

/** The answer text a recorded stream spells, per format. */
function streamedText(entry: HarEntry): string {
  return parseSse(entry.response.content.text ?? '')
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data) as Record<string, unknown> & { choices?: { delta?: { content?: string } }[]; delta?: unknown })
    .map((data) => {
      if (data.choices) return data.choices[0]?.delta?.content ?? '';
      if (data['type'] === 'response.output_text.delta') return String(data.delta);
      if (data['type'] === 'content_block_delta') return String((data.delta as { text?: string }).text ?? '');
      return '';
    })
    .join('');
}

const pathOf = (entry: HarEntry): string => new URL(entry.request.url).pathname;
const findEntries = (har: Har, method: string, path: string | RegExp): HarEntry[] =>
  har.log.entries.filter((e) => e.request.method === method && (typeof path === 'string' ? pathOf(e) === path : path.test(pathOf(e))));
const bodyOf = (entry: HarEntry): Record<string, unknown> => JSON.parse(entry.request.postData?.text ?? 'null') as Record<string, unknown>;

it('records a proxy run as one valid HAR 1.2 file, tasks as pages, with no secret, prompt or generated text in it', async () => {
  const { dir, files, raw, har, seen, originals } = await record(false);

  expect(files[0]).toMatch(/recording-\d{12}(-\d+)?\.har$/);
  expect(readdirSync(dir)).toEqual([files[0]?.split('/').at(-1)]);
  expect(harProblems(har)).toEqual([]);
  expect(readRecording(dir).entries).toHaveLength(originals.length);
  expect(har.log._svcEmulator).toEqual({ upstream: direct, keepContent: false });

  // One entry per exchange, in request order, each the upstream's address of the request with its real times.
  expect(har.log.entries).toHaveLength(originals.length);
  har.log.entries.forEach((entry, i) => {
    const original = originals[i] as EndedExchange;
    expect(entry.request.method).toBe(original.exchange.method);
    expect(entry.request.url.replace(`token=[redacted]`, `token=${WEBHOOK_TOKEN}`)).toBe(`${direct}${original.exchange.path}`);
    expect(entry.response.status).toBe(original.exchange.status);
    expect(Date.parse(entry.startedDateTime)).toBe(original.startedMs);
    expect(entry.timings.wait).toBe(original.firstByteMs - original.startedMs);
    expect(entry.time).toBe(original.endMs - original.startedMs);
    // A stream keeps its events, one recorded event for each sent.
    if (original.exchange.events.length > 0) {
      expect(parseSse(entry.response.content.text ?? '')).toHaveLength(original.exchange.events.length);
      expect(original.exchange.events.length).toBeGreaterThan(5);
    }
    // Text calls: format and fingerprint of the request as sent.
    const format = textFormatOf(original.exchange.path);
    if (format) {
      expect(entry._svcEmulator?.textFormat).toBe(format.name);
      expect(entry._svcEmulator?.textFingerprint).toBe(textFingerprint(format, JSON.parse(original.exchange.requestBody ?? '')));
      expect(entry._svcEmulator?.textFingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
  });
  // Headers as forwarded: the upstream's Host.
  expect(har.log.entries.every((e) => e.request.headers.find((h) => h.name.toLowerCase() === 'host')?.value === new URL(direct).host)).toBe(true);
  const list = findEntries(har, 'GET', '/v1/tasks')[0];
  expect(list?.request.queryString).toEqual([{ name: 'limit', value: '5' }]);
  expect(findEntries(har, 'POST', '/v1/chat/completions')[0]?.request.postData?.mimeType).toBe('application/json');

  // Tasks: one page each, and every exchange of a task points at it.
  expect(har.log.pages.map((p) => p.id).sort()).toEqual([seen.notes.id, seen.canceled.id].sort());
  for (const task of [seen.notes, seen.canceled]) {
    const page = har.log.pages.find((p) => p.id === task.id);
    expect(page).toMatchObject({ title: `${task.id} (${task.model})`, _svcEmulator: { model: task.model } });
    const grouped = har.log.entries.filter((e) => e.pageref === task.id);
    expect(grouped.every((e) => e._svcEmulator?.task === task.id)).toBe(true);
    expect(grouped[0]?.request.method).toBe('POST');
    expect(pathOf(grouped[0] as HarEntry)).toBe('/v1/tasks');
    expect(page?.startedDateTime).toBe(grouped[0]?.startedDateTime);
    expect(grouped.length).toBe(har.log.entries.filter((e) => pathOf(e).startsWith(`/v1/tasks/${task.id}`)).length + 1);
  }
  expect(har.log.entries.filter((e) => e.pageref === seen.canceled.id).map((e) => `${e.request.method} ${e.response.status}`)).toEqual(['POST 200', 'POST 200', 'POST 409', 'GET 200']);
  expect(har.log.entries.filter((e) => e.pageref === seen.notes.id).length).toBeGreaterThan(2);

  // No secret: keys, the signing secret, the callback-secret look-alike, the callback address's token, bearer
  // tokens, the signature headers' values.
  for (const secret of [key, signed.key, signed.secret, WEBHOOK_SECRET_LOOKALIKE, WEBHOOK_TOKEN, 'Bearer ', 'svs_', 'whsec_M']) {
    expect(raw.includes(secret), `the recording holds ${secret}`).toBe(false);
  }
  for (const headers of seen.signatureHeaders) {
    expect(raw).not.toContain(headers['X-Svc-Signature']);
    expect(raw).not.toContain(headers['X-Svc-Nonce']);
  }
  for (const entry of har.log.entries) {
    for (const { name, value } of entry.request.headers) {
      if (/^(authorization|x-api-key|x-svc-(timestamp|nonce|signature))$/i.test(name)) expect(value).toBe('[redacted]');
    }
  }
  const [anthropicPlain, anthropicStreamed] = findEntries(har, 'POST', '/v1/messages');
  expect(anthropicPlain?._svcEmulator?.redacted).toEqual(['content', 'header:authorization']);
  expect(anthropicStreamed?._svcEmulator?.redacted).toEqual(['content', 'header:x-api-key']);
  const signedEntry = findEntries(har, 'POST', '/v1/chat/completions').at(-1);
  expect(signedEntry?._svcEmulator?.redacted).toEqual(expect.arrayContaining(['header:authorization', 'header:x-svc-signature', 'header:x-svc-nonce', 'content']));
  const submit = har.log.entries.find((e) => e.pageref === seen.notes.id) as HarEntry;
  expect(submit._svcEmulator?.redacted).toEqual(expect.arrayContaining(['secret', 'content']));
  expect(bodyOf(submit)).toEqual({
    model: 'social-notes-data',
    input: { mode: 'note', note: xOut(PROMPTS.note), agree: true },
    webhook_url: `${receiver.url}/hooks/tasks?token=[redacted]`,
    metadata: { order: 'order-1187', hint: 'whsec_[redacted]' },
  });

  // No prompt and no generated text; what is left has their shape.
  for (const [name, text] of [...Object.entries(PROMPTS), ...Object.entries(seen.answers)]) {
    expect(text.length, name).toBeGreaterThan(10);
    expect(appears(raw, text), `the recording holds ${name}: ${text}`).toBe(false);
  }
  const [chatPlain, chatStreamed] = findEntries(har, 'POST', '/v1/chat/completions');
  expect(bodyOf(chatPlain as HarEntry)).toMatchObject({ model: 'svc-text-pro', messages: [{ role: 'user', content: xOut(PROMPTS.chat) }] });
  expect((JSON.parse(chatPlain?.response.content.text ?? '') as OpenAI.Chat.ChatCompletion).choices[0]?.message.content).toBe(xOut(seen.answers.chat));
  expect(bodyOf(chatStreamed as HarEntry)).toMatchObject({ messages: [{ role: 'user', content: [{ type: 'text', text: xOut(PROMPTS.chatStream) }] }], stream: true });
  expect(streamedText(chatStreamed as HarEntry)).toBe(xOut(seen.answers.chatStream));
  const responsesEntry = findEntries(har, 'POST', '/v1/responses')[0] as HarEntry;
  expect(bodyOf(responsesEntry)).toMatchObject({ instructions: xOut(PROMPTS.instructions), input: xOut(PROMPTS.responses) });
  expect(streamedText(responsesEntry)).toBe(xOut(seen.answers.responses));
  const messagesStreamed = findEntries(har, 'POST', '/v1/messages')[1] as HarEntry;
  expect(bodyOf(messagesStreamed)).toMatchObject({ system: [{ type: 'text', text: xOut(PROMPTS.system) }] });
  expect(streamedText(messagesStreamed)).toBe(xOut(seen.answers.messageStream));
  const lastPoll = findEntries(har, 'GET', `/v1/tasks/${seen.notes.id}`).at(-1) as HarEntry;
  expect(JSON.parse(lastPoll.response.content.text ?? '')).toMatchObject({ status: 'succeeded', input: { mode: 'note', agree: true }, output: { text: xOut(seen.answers.notes), files: [] } });
  const video = findEntries(har, 'GET', `/v1/tasks/${seen.canceled.id}`)[0] as HarEntry;
  expect(JSON.parse(video.response.content.text ?? '')).toMatchObject({ input: { prompt: xOut(PROMPTS.video), resolution: '480p', duration: 4, mode: 'text' } });
}, 60_000);

it('with keepContent keeps prompts and outputs, and still no secret', async () => {
  const { raw, har, seen } = await record(true);

  expect(harProblems(har)).toEqual([]);
  expect(har.log._svcEmulator).toEqual({ upstream: direct, keepContent: true });
  for (const [name, text] of [...Object.entries(PROMPTS), ...Object.entries(seen.answers)]) {
    if (name === 'chatStream' || name === 'responses' || name === 'messageStream') continue;
    expect(appears(raw, text), `the recording lacks ${name}: ${text}`).toBe(true);
  }
  expect(streamedText(findEntries(har, 'POST', '/v1/chat/completions')[1] as HarEntry)).toBe(seen.answers.chatStream);
  expect(streamedText(findEntries(har, 'POST', '/v1/responses')[0] as HarEntry)).toBe(seen.answers.responses);
  expect(streamedText(findEntries(har, 'POST', '/v1/messages')[1] as HarEntry)).toBe(seen.answers.messageStream);
  expect(har.log.entries.some((e) => e._svcEmulator?.redacted?.includes('content'))).toBe(false);

  for (const secret of [key, signed.key, signed.secret, WEBHOOK_SECRET_LOOKALIKE, WEBHOOK_TOKEN, 'Bearer ', 'svs_', 'whsec_M']) {
    expect(raw.includes(secret), `the recording holds ${secret}`).toBe(false);
  }
  for (const headers of seen.signatureHeaders) {
    expect(raw).not.toContain(headers['X-Svc-Signature']);
    expect(raw).not.toContain(headers['X-Svc-Nonce']);
  }
}, 60_000);

it('leaves a valid file between writes before it is closed (the delayed write), and names each run apart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-recording-'));
  const fixed = (): number => Date.parse('2026-11-23T01:30:00Z');
  const recorder = createRecorder({ dir, upstream: direct, now: fixed, writeDelayMs: 20 });
  const proxy = createProxy({ upstream: direct, log: () => undefined, onExchange: recorder.onExchange });
  const url = await proxy.listen(0);
  const get = (path: string): Promise<Response> => fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  // A read while a write is under way may see part of it (a write to a file is not atomic to a reader at the same
  // moment): such a read is tried again. Between writes the file must parse, and be the whole recording so far.
  const written = async (count: number): Promise<Har> => {
    let torn: unknown = null;
    for (let tries = 0; tries < 200; tries++) {
      const name = readdirSync(dir).find((n) => n.endsWith('.har'));
      if (name) {
        try {
          const har = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Har;
          if (har.log.entries.length >= count) return har;
        } catch (err) {
          torn = err;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no recording with ${count} entries in ${dir}${torn ? ` (the last read did not parse: ${String(torn)})` : ''}`);
  };
  try {
    expect((await get('/v1/tasks?limit=1')).status).toBe(200);
    await proxy.settled();
    expect(harProblems(await written(1))).toEqual([]);
    expect(readdirSync(dir)).toEqual(['recording-261123093000.har']);
    expect((await get('/v1/models')).status).toBe(200);
    await proxy.settled();
    const second = await written(2);
    expect(second.log.entries.map(pathOf)).toEqual(['/v1/tasks', '/v1/models']);
  } finally {
    await proxy.close();
  }
  expect(await recorder.close()).toEqual([join(dir, 'recording-261123093000.har')]);
  // Another run at the same second gets its own file; a run that recorded nothing writes none.
  const again = createRecorder({ dir, upstream: direct, now: fixed });
  again.onExchange((await recordedOnce(direct)) as EndedExchange);
  expect(await again.close()).toEqual([join(dir, 'recording-261123093000-2.har')]);
  expect(await createRecorder({ dir, upstream: direct, now: fixed }).close()).toEqual([]);
  expect(readdirSync(dir).sort()).toEqual(['recording-261123093000-2.har', 'recording-261123093000.har']);
  expect(existsSync(join(dir, 'recording-261123093000-3.har'))).toBe(false);
});

it('leaves out a body over the capture limit and says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-recording-'));
  const recorder = createRecorder({ dir, upstream: direct });
  const proxy = createProxy({ upstream: direct, log: () => undefined, captureLimit: 300, onExchange: recorder.onExchange });
  const url = await proxy.listen(0);
  const prompt = 'Write about the slow patience of glaciers and their valleys. '.repeat(6);
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'svc-text-pro', max_tokens: 128, messages: [{ role: 'user', content: prompt }] }),
  });
  const answer = (await res.json()) as OpenAI.Chat.ChatCompletion;
  await proxy.close();
  const [file] = await recorder.close();
  const raw = readFileSync(file ?? '', 'utf8');
  const [entry] = (JSON.parse(raw) as Har).log.entries;
  expect(entry?._svcEmulator).toMatchObject({ truncated: true, textFormat: 'chat' });
  expect(entry?._svcEmulator?.textFingerprint).toBeUndefined();
  expect(entry?.request.postData).toEqual({ mimeType: 'application/json', text: '', comment: "over the recorder's capture limit: left out" });
  expect(entry?.request.bodySize).toBeGreaterThan(300);
  expect(entry?.response.content.text).toBeUndefined();
  expect(entry?.response.content.size).toBe(Number(res.headers.get('content-length')));
  expect(raw).not.toContain(prompt.slice(0, 40));
  expect(raw).not.toContain(answer.choices[0]?.message.content ?? '');
});

/** One ended exchange of a GET through a throwaway proxy. */
async function recordedOnce(upstream: string): Promise<EndedExchange | undefined> {
  let ended: EndedExchange | undefined;
  const proxy = createProxy({ upstream, log: () => undefined, onExchange: (e) => (ended = e) });
  const url = await proxy.listen(0);
  await fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${key}` } });
  await proxy.close();
  return ended;
}

it.each([
  ['an API key', 'key sk-Ab12Cd34Ef56Gh78Ij90 here', 'key sk-[redacted] here'],
  ['a seeded API key', '"sk-emulator-demo"', '"sk-[redacted]"'],
  ['a signing secret', 'svs_AbCdEf0123456789', 'svs_[redacted]'],
  ['a callback secret', 'whsec_MfKQ9r8GKYqr+/w=', 'whsec_[redacted]'],
  ['a bearer token', 'Authorization: Bearer abc.def-ghi', 'Authorization: [redacted bearer token]'],
  ['a token in a query', 'https://h.example/cb?x=1&token=abc123&y=2', 'https://h.example/cb?x=1&token=[redacted]&y=2'],
  ['nothing secret', 'a task-sk-like desk-lamp of 40 points', 'a task-sk-like desk-lamp of 40 points'],
])('redactSecrets replaces %s', (_name, text, expected) => {
  expect(redactSecrets(text).text).toBe(expected);
  expect(redactSecrets(expected).text).toBe(expected);
});

it('redacts credential headers whole, content in place, and keeps the shape of streams and task inputs', () => {
  expect(redactHeaders([{ name: 'X-Admin-Token', value: 'root' }, { name: 'webhook-signature', value: 'v1,abc' }, { name: 'x-ratelimit-remaining-tokens', value: '10' }])).toEqual({
    headers: [{ name: 'X-Admin-Token', value: '[redacted]' }, { name: 'webhook-signature', value: '[redacted]' }, { name: 'x-ratelimit-remaining-tokens', value: '10' }],
    redacted: ['header:x-admin-token', 'header:webhook-signature'],
  });
  expect(xOut('Hi there,  friend!\n')).toBe('xx xxxxxx  xxxxxxx\n');
  const sse = 'event: content_block_delta\r\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"Hello you"}}\r\n\r\n: ping\n\ndata: {"a":\ndata: "b"}\n\ndata: [DONE]\n\n';
  expect(redactSse(sse, redactTextJson)).toBe(
    'event: content_block_delta\r\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"xxxxx xxx"}}\r\n\r\n: ping\n\ndata: {"a":\ndata: "b"}\n\ndata: [DONE]\n\n',
  );
  expect(redactTextJson({ role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { city: 'Oslo', days: 3 } }], stop_reason: 'tool_use' })).toEqual({
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { city: 'xxxx', days: 3 } }],
    stop_reason: 'tool_use',
  });
  expect(redactTaskInput('avatar-photo', { image: 'file_1', drive: 'text', content: 'Good day', voice_audio: 'file_2', quality: 'max' })).toEqual({
    image: 'file_1',
    drive: 'text',
    content: 'xxxx xxx',
    voice_audio: 'file_2',
    quality: 'max',
  });
  expect(redactTaskInput('some-new-model', { mode: 'fast', text: 'A b', count: 2 })).toEqual({ mode: 'fast', text: 'x x', count: 2 });
});
