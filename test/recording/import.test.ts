import Anthropic from '@anthropic-ai/sdk';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { parse } from 'yaml';
import { afterEach, expect, it, vi } from 'vitest';
import { importRecording, parseImportRecordingOptions } from '../../src/cli/import-recording.ts';
import { UsageError } from '../../src/cli/args.ts';
import { formatTime } from '../../src/index.ts';
import { xOut as x } from '../../src/recording/index.ts';
import type { Har, HarEntry, HarEntryExtra, HarPage } from '../../src/recording/index.ts';
import type { Scenario } from '../../src/scenarios/index.ts';
import { chatFormat, messagesFormat, textFingerprint } from '../../src/text-formats/index.ts';
import { admin as cliAdmin, killAll, startCli } from '../support/cli.ts';
import { runCommand } from '../support/command.ts';
import { DEMO_KEY, START, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// `svc-emulator import-recording`: a recording built here as the proxy writes one (HAR 1.2, a page per task,
// `_svcEmulator` facts) is imported, and an emulator started with the files replays it: tasks on the manual clock
// as recorded, text answers chunk by chunk through the official SDKs.

const T0 = Date.parse(START);
const at = (seconds: number): number => T0 + seconds * 1000;

const dirs: string[] = [];
const emulators: TestEmulator[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  killAll();
  await Promise.all(emulators.splice(0).map((t) => t.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-import-recording-'));
  dirs.push(dir);
  return dir;
}

// ---------------------------------------------------------------------------------------------------------------
// A recording, as src/recording/har.ts describes it

interface ExchangeSpec {
  atMs: number;
  method: string;
  path: string;
  request?: unknown;
  status?: number;
  /** A JSON body, or a stream's whole SSE text. */
  response: unknown;
  stream?: boolean;
  waitMs?: number;
  receiveMs?: number;
  task?: string;
  extra?: HarEntryExtra;
}

/** Builds a HAR log; with `redact`, prompts and outputs are x'd out and each exchange says `content` was redacted. */
class RecordingBuilder {
  readonly pages: HarPage[] = [];
  readonly entries: HarEntry[] = [];
  constructor(private readonly redact = false) {}

  exchange(spec: ExchangeSpec): this {
    const requestText = spec.request === undefined ? undefined : JSON.stringify(spec.request);
    const responseText = typeof spec.response === 'string' ? spec.response : JSON.stringify(spec.response);
    const wait = spec.waitMs ?? 120;
    const receive = spec.receiveMs ?? 2;
    const status = spec.status ?? 200;
    const extra: HarEntryExtra = { ...spec.extra, ...(spec.task ? { task: spec.task } : {}), ...(this.redact ? { redacted: ['header:authorization', 'content'] } : { redacted: ['header:authorization'] }) };
    this.entries.push({
      ...(spec.task ? { pageref: spec.task } : {}),
      startedDateTime: new Date(spec.atMs).toISOString(),
      time: 1 + wait + receive,
      request: {
        method: spec.method,
        url: `https://api.example.com${spec.path}`,
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: [{ name: 'Authorization', value: 'Bearer [redacted]' }],
        queryString: [],
        ...(requestText === undefined ? {} : { postData: { mimeType: 'application/json', text: requestText } }),
        headersSize: -1,
        bodySize: requestText?.length ?? 0,
      },
      response: {
        status,
        statusText: status === 200 ? 'OK' : 'Error',
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: [{ name: 'Content-Type', value: spec.stream ? 'text/event-stream; charset=utf-8' : 'application/json' }],
        content: { size: responseText.length, mimeType: spec.stream ? 'text/event-stream; charset=utf-8' : 'application/json', text: responseText },
        redirectURL: '',
        headersSize: -1,
        bodySize: responseText.length,
      },
      cache: {},
      timings: { send: 1, wait, receive },
      _svcEmulator: extra,
    });
    return this;
  }

  /** A task's submission and polls: each snapshot is the task object an answer showed at that time. */
  task(id: string, model: string, request: Record<string, unknown>, snapshots: { atMs: number; body: Record<string, unknown> }[]): this {
    this.pages.push({ startedDateTime: new Date(snapshots[0]?.atMs ?? T0).toISOString(), id, title: `${model} ${id}`, pageTimings: {}, _svcEmulator: { model } });
    snapshots.forEach((snapshot, i) => {
      this.exchange({
        atMs: snapshot.atMs,
        method: i === 0 ? 'POST' : 'GET',
        path: i === 0 ? '/v1/tasks' : `/v1/tasks/${id}`,
        ...(i === 0 ? { request: this.redactInput(request) } : {}),
        response: this.redactTask(snapshot.body),
        task: id,
      });
    });
    return this;
  }

  /** A text call: its request (fingerprinted before redaction, as the recorder does) and its answer. */
  text(spec: ExchangeSpec & { format: typeof chatFormat }): this {
    const fingerprint = textFingerprint(spec.format, spec.request);
    return this.exchange({
      ...spec,
      request: this.redact ? redactPrompts(spec.request) : spec.request,
      response: this.redact ? redactAnswer(typeof spec.response === 'string' ? spec.response : JSON.stringify(spec.response)) : spec.response,
      extra: { textFormat: spec.format.name, ...(fingerprint ? { textFingerprint: fingerprint } : {}) },
    });
  }

  har(): Har {
    return { log: { version: '1.2', creator: { name: 'svc-emulator proxy', version: '0.1.0' }, pages: this.pages, entries: this.entries } };
  }

  async write(dir: string, name = 'recording.har'): Promise<string> {
    await writeFile(join(dir, name), JSON.stringify(this.har(), null, 2));
    return dir;
  }

  private redactInput(request: Record<string, unknown>): Record<string, unknown> {
    if (!this.redact) return request;
    const input = request['input'] as Record<string, unknown>;
    return { ...request, input: Object.fromEntries(Object.entries(input).map(([k, v]) => [k, typeof v === 'string' && k === 'prompt' ? x(v) : v])) };
  }

  private redactTask(body: Record<string, unknown>): Record<string, unknown> {
    if (!this.redact) return body;
    const output = body['output'] as { text?: string } | null;
    return {
      ...body,
      input: this.redactInput(body)['input'],
      output: output && typeof output.text === 'string' ? { ...output, text: x(output.text) } : output,
    };
  }
}

/** An answer's texts x'd out in place (JSON or SSE): content, text and delta strings. */
const redactAnswer = (text: string): string => text.replace(/"(content|text|delta)":"([^"]*)"/g, (_m, key: string, value: string) => `"${key}":"${x(value)}"`);

function redactPrompts(request: unknown): unknown {
  const body = request as { messages?: { role: string; content: string }[]; system?: string };
  return { ...body, ...(body.messages ? { messages: body.messages.map((m) => ({ ...m, content: x(m.content) })) } : {}), ...(body.system ? { system: x(body.system) } : {}) };
}

/** A task object as the service answers it. */
function taskBody(
  id: string,
  model: string,
  input: Record<string, unknown>,
  status: string,
  times: { created: number; started?: number; finished?: number },
  end: { output?: Record<string, unknown>; error?: { code: string; message: string } } = {},
): Record<string, unknown> {
  return {
    id,
    object: 'task',
    model,
    status,
    created_at: formatTime(times.created),
    started_at: times.started === undefined ? null : formatTime(times.started),
    finished_at: times.finished === undefined ? null : formatTime(times.finished),
    input,
    points: { frozen: '10.000', charged: status === 'succeeded' ? '10.000' : '0.000', refunded: status === 'succeeded' ? '0.000' : '10.000' },
    output: end.output ?? null,
    error: end.error ?? null,
    metadata: {},
  };
}

const VIDEO = 'video-gen-2.0-fast';
const VIDEO_INPUT = { mode: 'text', prompt: 'A cat on a skateboard', ratio: '9:16', resolution: '720p', duration: 5, sound: true };
const NOTES_INPUT = { mode: 'search', keyword: 'coffee', sort: 'general', note_type: 'all', page: 1, agree: true };
const SUCCEEDED = 'T261123090000SUCC01';
const FAILED = 'T261123090001FAIL01';
const TIMED_OUT = 'T261123090002TIME01';
const CANCELED = 'T261123090003CANC01';
const UNFINISHED = 'T261123090004OPEN01';

const CHAT_REQUEST = {
  model: 'svc-text-pro',
  messages: [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'Which river is the longest?' },
  ],
  max_tokens: 100,
  stream: true,
  stream_options: { include_usage: true },
};
const CHAT_CHUNKS = ['The', ' Nile', ' is usually', ' named', ' the longest', '.'];
const MESSAGES_REQUEST = { model: 'svc-text-lite', max_tokens: 200, system: 'Be friendly.', messages: [{ role: 'user', content: 'Say hello to the river.' }] };
const MESSAGES_TEXT = 'Hello, river! Nice to meet you.\n';

/** A chat stream as the service writes one: role chunk, content chunks, finish, usage, [DONE]. */
function chatStream(chunks: string[], usage: { prompt_tokens: number; completion_tokens: number }): string {
  const chunk = (delta: object, finish: string | null): string =>
    `data: ${JSON.stringify({ id: 'svcchat_rec', object: 'chat.completion.chunk', created: 1, model: 'svc-text-pro-20261101', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  return [
    chunk({ role: 'assistant', content: '' }, null),
    ...chunks.map((content) => chunk({ content }, null)),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({ id: 'svcchat_rec', object: 'chat.completion.chunk', created: 1, model: 'svc-text-pro-20261101', choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
}

/** The recording every test imports: four finished tasks and one still running, text calls good and bad. */
function recording(redact = false): RecordingBuilder {
  const video = (status: string, times: { created: number; started?: number; finished?: number }, end = {}) => taskBody(SUCCEEDED, VIDEO, VIDEO_INPUT, status, times, end);
  const videoOutput = {
    files: [
      {
        url: 'https://cdn.example.com/files/abc.mp4',
        type: 'video',
        mime_type: 'video/mp4',
        size: 123456,
        width: 1080,
        height: 1920,
        duration: 5,
        cover_url: 'https://cdn.example.com/files/abc.jpg',
        expires_at: '2026-11-30T09:00:00+08:00',
      },
    ],
    duration: 5,
  };
  const notes = (status: string, times: { created: number; started?: number; finished?: number }, end = {}) => taskBody(FAILED, 'social-notes-data', NOTES_INPUT, status, times, end);
  const timeout = (status: string, times: { created: number; started?: number; finished?: number }, end = {}) =>
    taskBody(TIMED_OUT, VIDEO, { ...VIDEO_INPUT, prompt: 'A very long render' }, status, times, end);
  const canceled = (status: string, times: { created: number; started?: number; finished?: number }, end = {}) =>
    taskBody(CANCELED, VIDEO, { ...VIDEO_INPUT, prompt: 'Never mind' }, status, times, end);
  const builder = new RecordingBuilder(redact)
    // Polled sparsely (20 s, then 200 s): the times come from the task objects, not the polls.
    .task(SUCCEEDED, VIDEO, { model: VIDEO, input: VIDEO_INPUT }, [
      { atMs: at(0), body: video('queued', { created: at(0) }) },
      { atMs: at(20), body: video('processing', { created: at(0), started: at(15) }) },
      { atMs: at(200), body: video('succeeded', { created: at(0), started: at(15), finished: at(165) }, { output: videoOutput }) },
    ])
    .task(FAILED, 'social-notes-data', { model: 'social-notes-data', input: { mode: 'search', keyword: 'coffee', agree: true } }, [
      { atMs: at(1), body: notes('queued', { created: at(1) }) },
      { atMs: at(60), body: notes('failed', { created: at(1), started: at(3), finished: at(48) }, { error: { code: 'generation_failed', message: 'Generation failed upstream.' } }) },
    ])
    .task(TIMED_OUT, VIDEO, { model: VIDEO, input: { ...VIDEO_INPUT, prompt: 'A very long render' } }, [
      { atMs: at(2), body: timeout('queued', { created: at(2) }) },
      { atMs: at(700), body: timeout('failed', { created: at(2), started: at(10), finished: at(602) }, { error: { code: 'timeout', message: 'Generation timed out; the points were refunded.' } }) },
    ])
    .task(CANCELED, VIDEO, { model: VIDEO, input: { ...VIDEO_INPUT, prompt: 'Never mind' } }, [
      { atMs: at(3), body: canceled('queued', { created: at(3) }) },
      { atMs: at(30), body: canceled('processing', { created: at(3), started: at(18) }) },
    ])
    .exchange({
      atMs: at(40),
      method: 'POST',
      path: `/v1/tasks/${CANCELED}/cancel`,
      response: canceled('canceled', { created: at(3), started: at(18), finished: at(40) }, { error: { code: 'canceled', message: 'The task was canceled.' } }),
      task: CANCELED,
    })
    .task(UNFINISHED, VIDEO, { model: VIDEO, input: { ...VIDEO_INPUT, prompt: 'Still going' } }, [
      { atMs: at(4), body: taskBody(UNFINISHED, VIDEO, { ...VIDEO_INPUT, prompt: 'Still going' }, 'queued', { created: at(4) }) },
    ])
    .text({ format: chatFormat, atMs: at(5), method: 'POST', path: '/v1/chat/completions', request: CHAT_REQUEST, stream: true, waitMs: 30, receiveMs: 50, response: chatStream(CHAT_CHUNKS, { prompt_tokens: 21, completion_tokens: 8 }) })
    .text({
      format: messagesFormat,
      atMs: at(6),
      method: 'POST',
      path: '/v1/messages',
      request: MESSAGES_REQUEST,
      waitMs: 25,
      response: { id: 'msg_rec', type: 'message', role: 'assistant', model: 'svc-text-lite-20261101', content: [{ type: 'text', text: MESSAGES_TEXT }], stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 9 } },
    })
    // The same chat request again, not streamed: the stream above keeps the recorded chunking.
    .text({ format: chatFormat, atMs: at(7), method: 'POST', path: '/v1/chat/completions', request: { ...CHAT_REQUEST, stream: false, stream_options: undefined }, response: { choices: [{ index: 0, message: { role: 'assistant', content: 'The Nile.' }, finish_reason: 'stop' }] } })
    .text({ format: chatFormat, atMs: at(8), method: 'POST', path: '/v1/chat/completions', request: { ...CHAT_REQUEST, max_tokens: 5 }, status: 429, response: { error: { code: 'rate_limited', message: 'Slow down.' } } })
    .text({
      format: chatFormat,
      atMs: at(9),
      method: 'POST',
      path: '/v1/chat/completions',
      request: { ...CHAT_REQUEST, stream: false, max_tokens: 6 },
      response: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] },
    });
  return builder;
}

async function imported(builder: RecordingBuilder): Promise<{ dir: string; out: string; printed: string[]; tasks: Scenario[]; texts: Scenario[]; files: Record<string, string> }> {
  const dir = await builder.write(await tempDir());
  const printed: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
  await importRecording(parseImportRecordingOptions([dir]));
  vi.restoreAllMocks();
  const out = join(dir, 'scenarios');
  const files: Record<string, string> = {};
  for (const name of await readdir(out)) files[name] = await readFile(join(out, name), 'utf8');
  const scenariosOf = (name: string): Scenario[] => (files[name] ? (parse(files[name]) as { scenarios: Scenario[] }).scenarios : []);
  return { dir, out, printed, tasks: scenariosOf('recorded-tasks.yaml'), texts: scenariosOf('recorded-text.yaml'), files };
}

async function emulatorWith(scenariosDir: string): Promise<TestEmulator> {
  const t = await startEmulator({ scenariosDir });
  emulators.push(t);
  return t;
}

const nameOf = (id: string): string => `recorded-${id.toLowerCase()}`;

/** Submits with the recorded task's scenario and answers the task's status after each advance of `steps` seconds. */
async function statusesAlong(t: TestEmulator, id: string, body: Record<string, unknown>, steps: number[]): Promise<Record<string, unknown>[]> {
  const submitted = await t.api.post('/v1/tasks', body, { 'X-Emulator-Scenario': nameOf(id) });
  expect(submitted.status).toBe(200);
  const seen: Record<string, unknown>[] = [];
  for (const seconds of steps) {
    await t.admin.post('/_emulator/clock/advance', { seconds });
    seen.push((await t.api.get(`/v1/tasks/${submitted.body.id as string}`)).body as Record<string, unknown>);
  }
  return seen;
}

// ---------------------------------------------------------------------------------------------------------------

it('writes one scenario per finished task, with the recorded times, ending, output shapes and a match rule', async () => {
  const { tasks, files, out } = await imported(recording());
  expect(Object.keys(files).sort()).toEqual(['recorded-tasks.yaml', 'recorded-text.yaml']);
  expect(tasks.map((s) => s.name)).toEqual([SUCCEEDED, FAILED, TIMED_OUT, CANCELED].map(nameOf));
  const [succeeded, failed, timedOut, canceled] = tasks;
  expect(succeeded).toMatchObject({
    queue_seconds: 15,
    processing_seconds: 150,
    outcome: 'succeeded',
    match: { models: [VIDEO], input: VIDEO_INPUT },
    output: { files: [{ type: 'video', mime_type: 'video/mp4', width: 1080, height: 1920, duration: 5 }], duration: 5 },
  });
  // File records keep their shape, never the recorded addresses, ids or sizes.
  expect(Object.keys(succeeded?.output?.files?.[0] ?? {}).sort()).toEqual(['duration', 'height', 'mime_type', 'type', 'width']);
  expect(failed).toMatchObject({ queue_seconds: 2, processing_seconds: 45, outcome: 'failed', failure: { code: 'generation_failed', during: 'processing', message: 'Generation failed upstream.' } });
  expect(timedOut).toMatchObject({ queue_seconds: 8, processing_seconds: 592, outcome: 'failed', failure: { code: 'timeout', during: 'processing' } });
  expect(canceled).toMatchObject({ queue_seconds: 15, outcome: 'timeout', cancelable_while_processing: true });
  expect(files['recorded-tasks.yaml']).toMatch(/^# Recorded tasks, imported by svc-emulator import-recording from recording\.har\./);
  // The emulator's own check accepts them: a start with the folder succeeds and lists them.
  const t = await emulatorWith(out);
  const listed = ((await t.admin.get('/_emulator/scenarios')).body.data as Scenario[]).map((s) => s.name);
  expect(listed).toEqual(expect.arrayContaining([...tasks, ...(parse(files['recorded-text.yaml'] ?? '') as { scenarios: Scenario[] }).scenarios].map((s) => s.name)));
});

it('replays the succeeded task on the manual clock: 15 s queued, 150 s processing, the recorded file shape', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const [queued, started, processing, done] = await statusesAlong(t, SUCCEEDED, { model: VIDEO, input: VIDEO_INPUT }, [14, 1, 149, 1]);
  expect(queued?.['status']).toBe('queued');
  expect(started).toMatchObject({ status: 'processing', started_at: formatTime(at(15)) });
  expect(processing?.['status']).toBe('processing');
  expect(done).toMatchObject({ status: 'succeeded', finished_at: formatTime(at(165)), output: { duration: 5, files: [{ type: 'video', width: 1080, height: 1920, duration: 5 }] } });
});

it('chooses the succeeded task\'s scenario for a submission with the same model and input when content was kept', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const submitted = await t.api.post('/v1/tasks', { model: VIDEO, input: { prompt: 'A cat on a skateboard', ratio: '9:16', resolution: '720p', duration: 5 } });
  expect((await t.admin.get(`/_emulator/tasks/${submitted.body.id as string}`)).body.scenario).toBe(nameOf(SUCCEEDED));
  const other = await t.api.post('/v1/tasks', { model: VIDEO, input: { prompt: 'A dog on a skateboard', ratio: '9:16', resolution: '720p', duration: 5 } });
  expect((await t.admin.get(`/_emulator/tasks/${other.body.id as string}`)).body.scenario).toBe('default');
});

it('replays the failed task: started after 2 s, failed with generation_failed and the recorded message 45 s later', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const [started, processing, done] = await statusesAlong(t, FAILED, { model: 'social-notes-data', input: { mode: 'search', keyword: 'tea', agree: true } }, [2, 44, 1]);
  expect(started?.['status']).toBe('processing');
  expect(processing?.['status']).toBe('processing');
  expect(done).toMatchObject({ status: 'failed', error: { code: 'generation_failed', message: 'Generation failed upstream.' }, points: { charged: '0.000' } });
});

it('replays the timed-out task: still processing at 599 s, failed with timeout at 600 s as recorded', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const [before, done] = await statusesAlong(t, TIMED_OUT, { model: VIDEO, input: { prompt: 'A render', ratio: '9:16', resolution: '720p', duration: 5 } }, [599, 1]);
  expect(before?.['status']).toBe('processing');
  expect(done).toMatchObject({ status: 'failed', error: { code: 'timeout' }, started_at: formatTime(at(8)), finished_at: formatTime(at(600)) });
});

it('keeps the canceled task processing until the client cancels it, which it then may', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const [processing] = await statusesAlong(t, CANCELED, { model: VIDEO, input: { prompt: 'A render', ratio: '9:16', resolution: '720p', duration: 5 } }, [600]);
  expect(processing?.['status']).toBe('processing');
  const canceled = await t.api.post(`/v1/tasks/${processing?.['id'] as string}/cancel`);
  expect(canceled.status).toBe(200);
  expect(canceled.body.status).toBe('canceled');
});

it('writes one text scenario per distinct request: the stream\'s deltas, usage and pacing; a plain answer cut into words', async () => {
  const { texts } = await imported(recording());
  const chatPrint = textFingerprint(chatFormat, CHAT_REQUEST);
  const messagesPrint = textFingerprint(messagesFormat, MESSAGES_REQUEST);
  expect(texts).toEqual([
    expect.objectContaining({
      name: `recorded-text-${chatPrint?.slice(7, 19) ?? ''}`,
      match: { text_request: chatPrint },
      outcome: 'succeeded',
      text: { chunks: CHAT_CHUNKS, input_tokens: 21, output_tokens: 8, first_token_ms: 30, chunk_interval_ms: 10 },
    }),
    expect.objectContaining({
      match: { text_request: messagesPrint },
      text: { chunks: ['Hello,', ' river!', ' Nice', ' to', ' meet', ' you.\n'], finish: 'length', input_tokens: 12, output_tokens: 9, first_token_ms: 25 },
    }),
  ]);
});

it('replays the recorded chat stream through the openai SDK: the deltas are the recorded chunks, the usage the recorded one', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const base = await t.emulator.listen(0);
  const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: DEMO_KEY, maxRetries: 0 });
  // The same request, its keys in another order.
  const stream = await openai.chat.completions.create({
    stream_options: { include_usage: true },
    stream: true,
    max_tokens: 100,
    messages: CHAT_REQUEST.messages as OpenAI.Chat.ChatCompletionMessageParam[],
    model: 'svc-text-pro',
  });
  const deltas: string[] = [];
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
    if (chunk.usage) usage = chunk.usage;
  }
  expect(deltas).toEqual(CHAT_CHUNKS);
  expect(usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 8 });
  // Not streamed, it is the same text; another question gets generated text.
  const plain = await openai.chat.completions.create({ model: 'svc-text-pro', messages: CHAT_REQUEST.messages as OpenAI.Chat.ChatCompletionMessageParam[], max_tokens: 100 });
  expect(plain.choices[0]?.message.content).toBe(CHAT_CHUNKS.join(''));
  const other = await openai.chat.completions.create({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Which mountain is the highest?' }], max_tokens: 100 });
  expect(other.choices[0]?.message.content).not.toBe(CHAT_CHUNKS.join(''));
});

it('replays the recorded Messages answer through the anthropic SDK, streamed word by word, ended by max_tokens', async () => {
  const { out } = await imported(recording());
  const t = await emulatorWith(out);
  const base = await t.emulator.listen(0);
  const anthropic = new Anthropic({ baseURL: base, apiKey: DEMO_KEY, maxRetries: 0 });
  const deltas: string[] = [];
  const stream = anthropic.messages.stream({ ...MESSAGES_REQUEST, messages: [{ role: 'user', content: 'Say hello to the river.' }] });
  stream.on('text', (delta) => deltas.push(delta));
  const message = await stream.finalMessage();
  expect(deltas.join('')).toBe(MESSAGES_TEXT);
  expect(deltas).toHaveLength(6);
  expect(message.stop_reason).toBe('max_tokens');
  expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 9 });
});

/** A Messages-style stream as the service writes one, ended by `stopSequence`. */
function messagesStream(chunks: string[], stopSequence: string, usage: { input_tokens: number; output_tokens: number }): string {
  const event = (name: string, data: object): string => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const message = { id: 'msg_rec', type: 'message', role: 'assistant', model: 'svc-text-lite-20261101', content: [], stop_reason: null, stop_sequence: null };
  return [
    event('message_start', { message: { ...message, usage: { input_tokens: usage.input_tokens, output_tokens: 0 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('ping', {}),
    ...chunks.map((text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'stop_sequence', stop_sequence: stopSequence }, usage: { output_tokens: usage.output_tokens } }),
    event('message_stop', {}),
  ].join('');
}

it('imports a Messages answer ended by a stop sequence, plain or streamed, as finish stop_sequence and replays it', async () => {
  const plain = { ...MESSAGES_REQUEST, stop_sequences: ['###'] };
  const streamed = { ...MESSAGES_REQUEST, stop_sequences: ['END', '###'], stream: true };
  const chunks = ['Hello', ', river', '!'];
  const builder = new RecordingBuilder()
    .text({
      format: messagesFormat,
      atMs: at(1),
      method: 'POST',
      path: '/v1/messages',
      request: plain,
      response: { id: 'msg_rec', type: 'message', role: 'assistant', model: 'svc-text-lite-20261101', content: [{ type: 'text', text: 'Hello, river!' }], stop_reason: 'stop_sequence', stop_sequence: '###', usage: { input_tokens: 14, output_tokens: 3 } },
    })
    .text({ format: messagesFormat, atMs: at(2), method: 'POST', path: '/v1/messages', request: streamed, stream: true, response: messagesStream(chunks, 'END', { input_tokens: 15, output_tokens: 3 }) });
  const { out, texts } = await imported(builder);
  expect(texts.map((s) => s.text)).toEqual([
    expect.objectContaining({ chunks: ['Hello,', ' river!'], finish: 'stop_sequence', stop_sequence: '###', input_tokens: 14, output_tokens: 3 }),
    expect.objectContaining({ chunks, finish: 'stop_sequence', stop_sequence: 'END', input_tokens: 15, output_tokens: 3 }),
  ]);

  const t = await emulatorWith(out);
  const anthropic = new Anthropic({ baseURL: await t.emulator.listen(0), apiKey: DEMO_KEY, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'Say hello to the river.' }];
  const answer = await anthropic.messages.create({ ...plain, messages });
  expect(answer.content).toEqual([{ type: 'text', text: 'Hello, river!' }]);
  expect(answer).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '###' });
  const deltas: string[] = [];
  const stream = anthropic.messages.stream({ ...streamed, messages });
  stream.on('text', (delta) => deltas.push(delta));
  const message = await stream.finalMessage();
  expect(deltas).toEqual(chunks);
  expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END', usage: { input_tokens: 15, output_tokens: 3 } });
});

it('prints what it imported, what it skipped and why, the files and how to start the emulator with them', async () => {
  const { printed, out } = await imported(recording());
  expect(printed).toEqual([
    `imported 4 tasks: ${[SUCCEEDED, FAILED, TIMED_OUT, CANCELED].map(nameOf).join(', ')}`,
    'imported 2 text calls',
    'skipped 1 task: still queued when the recording ended (1)',
    'skipped 3 text calls: the same request as an earlier one (1), error answer (HTTP 429) (1), tool call (1)',
    `wrote ${join(out, 'recorded-tasks.yaml')}, ${join(out, 'recorded-text.yaml')}`,
    `start the emulator with them: svc-emulator start --scenarios ${out}`,
  ]);
});

it('imports a recording made without --keep-content: no match rules, said at the top of the file; xxx text with the real chunking', async () => {
  const { tasks, texts, files, printed, out } = await imported(recording(true));
  expect(tasks).toHaveLength(4);
  expect(tasks.every((s) => s.match === undefined)).toBe(true);
  expect(files['recorded-tasks.yaml']).toContain('# 4 tasks of this file were recorded without --keep-content: no match rule');
  expect(texts[0]?.text?.chunks).toEqual(CHAT_CHUNKS.map(x));
  expect(printed).toContain('warning: 4 tasks recorded without --keep-content: no match rules, choose them with X-Emulator-Scenario: recorded-<task id>');
  expect(printed).toContain('warning: 2 text answers recorded without --keep-content: they replay xxx text with the recorded chunking and timing');
  // Still chosen by name, and the fingerprints (taken before redaction) still match the real request.
  const t = await emulatorWith(out);
  const [done] = await statusesAlong(t, SUCCEEDED, { model: VIDEO, input: VIDEO_INPUT }, [165]);
  expect(done?.['status']).toBe('succeeded');
  const answer = await t.api.post('/v1/chat/completions', { ...CHAT_REQUEST, stream: false, stream_options: undefined });
  expect(answer.body.choices[0].message.content).toBe(x(CHAT_CHUNKS.join('')));
});

it('writes what `svc-emulator start --scenarios OUTDIR` loads', { timeout: 30_000 }, async () => {
  const { out, tasks } = await imported(recording());
  const cli = await startCli(['--scenarios', out]);
  const listed = (await (await cliAdmin(cli, 'GET', '/_emulator/scenarios')).json()) as { data: { name: string }[] };
  expect(listed.data.map((s) => s.name)).toEqual(expect.arrayContaining(tasks.map((s) => s.name)));
});

it.each([
  ['no recording', [], /DIR is required/],
  ['two recordings', ['a', 'b'], /one recording at a time \(also given: b\)/],
  ['an empty --out', ['a', '--out', ''], /--out needs a folder/],
  ['an unknown option', ['a', '--outt', 'b'], /unknown option --outt; did you mean --out\?/],
])('refuses %s', (_name, argv, message) => {
  expect(() => parseImportRecordingOptions(argv)).toThrow(UsageError);
  expect(() => parseImportRecordingOptions(argv)).toThrow(message);
});

it('writes beside a .har given alone, or to --out', async () => {
  expect(parseImportRecordingOptions(['rec']).out).toBe(join('rec', 'scenarios'));
  expect(parseImportRecordingOptions(['rec', '--out', 'elsewhere']).out).toBe('elsewhere');
  const dir = await new RecordingBuilder().write(await tempDir(), 'one.har');
  expect(parseImportRecordingOptions([join(dir, 'one.har')]).out).toBe(join(dir, 'scenarios'));
});

it('turns a missing or unreadable recording into one line of usage error', async () => {
  const dir = await tempDir();
  await expect(importRecording({ recording: join(dir, 'nope'), out: dir })).rejects.toThrow(/^svc-emulator import-recording: .*nope: no such file or directory$/);
  await writeFile(join(dir, 'bad.har'), '{"log": {"version": "1.1"}}');
  await expect(importRecording({ recording: dir, out: dir })).rejects.toThrow(UsageError);
});

// The command line: src/cli/main.ts dispatches `import-recording` to parseImportRecordingOptions and importRecording.

it.each([
  ['no recording', [], /DIR is required/],
  ['a recording that does not exist', ['/nonexistent/recording'], /^svc-emulator import-recording: \/nonexistent\/recording: no such file or directory\n$/],
  ['an unknown option', ['rec', '--outdir', 'x'], /unknown option --outdir/],
])('the CLI exits 2 for %s, saying why on stderr', { timeout: 30_000 }, async (_name, args, message) => {
  const run = await runCommand(['import-recording', ...args], 20_000);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(message);
});

it('the CLI imports a recording and prints the summary', { timeout: 30_000 }, async () => {
  const dir = await recording().write(await tempDir());
  const out = join(dir, 'out');
  const run = await runCommand(['import-recording', dir, '--out', out], 20_000);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`start the emulator with them: svc-emulator start --scenarios ${out}`);
  expect((await readdir(out)).sort()).toEqual(['recorded-tasks.yaml', 'recorded-text.yaml']);
});
