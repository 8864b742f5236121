import Anthropic from '@anthropic-ai/sdk';
import Big from 'big.js';
import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { chatFormat, messagesFormat, responsesFormat, textFingerprint } from '../../src/text-formats/index.ts';
import type { TextFormat } from '../../src/text-formats/index.ts';
import { textModel } from '../support/text-models.ts';

// Recorded answers ("text fixtures"): a scenario whose match.text_request is a request's fingerprint answers that
// request with its text.chunks, one content delta each, whatever the official SDKs send around it.

const ADMIN_TOKEN = 'x';
const PRO = textModel('svc-text-pro');

let emulator: Emulator;
let base: string;
let key: string;
let accountId: string;
let openai: OpenAI;
let anthropic: Anthropic;

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN_TOKEN, log: () => undefined });
  base = await emulator.listen(0);
  accountId = (await admin<{ id: string }>('POST', '/_emulator/accounts', { points: '1000.000' })).body.id;
  key = (await admin<{ key: string }>('POST', `/_emulator/accounts/${accountId}/keys`, {})).body.key;
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0 });
});
afterEach(() => emulator.close());

async function admin<T>(method: string, path: string, body?: object): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Loads one text fixture for the request `body` of `format`, with `text` beside its chunks. */
async function loadFixture(name: string, format: TextFormat, body: Record<string, unknown>, text: Record<string, unknown>): Promise<void> {
  const fingerprint = textFingerprint(format, body);
  expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  const loaded = await admin('POST', '/_emulator/scenarios', { scenarios: [{ name, outcome: 'succeeded', match: { text_request: fingerprint }, text }] });
  expect(loaded.status).toBe(201);
}

const CHUNKS = ['The', ' Nile', ',', ' the Amazon', ' and', ' the Danube', '.'];
const RECORDED = CHUNKS.join('');

const SYSTEM = 'Answer in one sentence.';
const QUESTION = 'Name three long rivers.';
/** The recorded chat request, in the order the recorder saw its keys. */
const CHAT = { model: 'svc-text-pro', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }], max_tokens: 64, seed: 7 };

const cost = (input: number, output: number): string =>
  new Big(PRO.input_per_million).times(input).plus(new Big(PRO.output_per_million).times(output)).div(1_000_000).round(3, Big.roundHalfUp).toFixed(3);

it('answers the recorded chat request with exactly the recorded text and usage, its keys in any order', async () => {
  await loadFixture('recorded-chat', chatFormat, CHAT, { chunks: CHUNKS, input_tokens: 21, output_tokens: 9 });
  // The same request as the SDK builds it, keys in another order.
  const completion = await openai.chat.completions.create({ seed: 7, max_tokens: 64, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[], model: 'svc-text-pro' });
  expect(completion.choices[0]?.message.content).toBe(RECORDED);
  expect(completion.choices[0]?.finish_reason).toBe('stop');
  expect(completion.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 });
  const record = emulator.internals.db.calls.get(completion._request_id ?? '');
  expect(record?.text).toMatchObject({ input_tokens: 21, output_tokens: 9, points: { charged: cost(21, 9) } });
});

it('streams the recorded chunks as the chat deltas, one chunk each, with the recorded usage', async () => {
  await loadFixture('recorded-chat', chatFormat, CHAT, { chunks: CHUNKS, output_tokens: 9 });
  const stream = await openai.chat.completions.create({ ...CHAT, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[], stream: true, stream_options: { include_usage: true } });
  const deltas: string[] = [];
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta.content) deltas.push(choice.delta.content);
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  expect(deltas).toEqual(CHUNKS);
  expect(finish).toBe('stop');
  expect(usage?.completion_tokens).toBe(9);
  // Without a recorded input count, the emulator counts the prompt as for any call.
  expect(usage?.prompt_tokens).toBe(Math.ceil((SYSTEM.length + QUESTION.length) / 4) + 6);
});

it('answers a request with another prompt with generated text', async () => {
  await loadFixture('recorded-chat', chatFormat, CHAT, { chunks: CHUNKS });
  const other = await openai.chat.completions.create({ ...CHAT, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Name three tall mountains.' }] });
  const content = other.choices[0]?.message.content ?? '';
  expect(content).not.toBe(RECORDED);
  expect(content.split(/\s+/).length).toBeGreaterThan(3);
  // Another maximum is another request too.
  const longer = await openai.chat.completions.create({ ...CHAT, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[], max_tokens: 65 });
  expect(longer.choices[0]?.message.content).not.toBe(RECORDED);
});

it('is not cut by a stop sequence or a maximum the recorded answer goes past', async () => {
  const request = { ...CHAT, max_tokens: 3, stop: ['Amazon'] };
  await loadFixture('recorded-chat', chatFormat, request, { chunks: CHUNKS, finish: 'length' });
  const before = (await admin<{ available: string }>('GET', `/_emulator/accounts/${accountId}`)).body.available;
  const completion = await openai.chat.completions.create({ ...request, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[] });
  expect(completion.choices[0]?.message.content).toBe(RECORDED);
  expect(completion.choices[0]?.finish_reason).toBe('length');
  expect(completion.usage?.completion_tokens).toBe(CHUNKS.length);
  // Seven output tokens charged for a maximum of three: the freeze covered them, nothing was collected.
  const after = (await admin<{ available: string; frozen: string }>('GET', `/_emulator/accounts/${accountId}`)).body;
  expect(after.frozen).toBe('0.000');
  expect(new Big(before).minus(after.available).toFixed(3)).toBe(cost(completion.usage?.prompt_tokens ?? NaN, CHUNKS.length));
});

it('ends a recorded Responses answer with finish length as response.incomplete, streamed or not', async () => {
  const request = { model: 'svc-text-pro', instructions: SYSTEM, input: QUESTION, max_output_tokens: 7 };
  await loadFixture('recorded-responses', responsesFormat, request, { chunks: CHUNKS, finish: 'length', input_tokens: 30, output_tokens: 7 });
  const response = await openai.responses.create(request);
  expect(response.status).toBe('incomplete');
  expect(response.incomplete_details?.reason).toBe('max_output_tokens');
  expect(response.output_text).toBe(RECORDED);
  expect(response.usage).toMatchObject({ input_tokens: 30, output_tokens: 7, total_tokens: 37 });

  const deltas: string[] = [];
  let last: OpenAI.Responses.ResponseStreamEvent | undefined;
  for await (const event of await openai.responses.create({ ...request, stream: true })) {
    if (event.type === 'response.output_text.delta') deltas.push(event.delta);
    last = event;
  }
  expect(deltas).toEqual(CHUNKS);
  expect(last?.type).toBe('response.incomplete');
});

it('streams a recorded Messages answer through the anthropic SDK: the text deltas are the chunks, stop_reason max_tokens', async () => {
  const request = { model: 'svc-text-pro', max_tokens: 7, system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }] };
  await loadFixture('recorded-messages', messagesFormat, request, { chunks: CHUNKS, finish: 'length', input_tokens: 25, output_tokens: 7 });
  const deltas: string[] = [];
  const stream = anthropic.messages.stream({ messages: request.messages, system: SYSTEM, max_tokens: 7, model: 'svc-text-pro' });
  stream.on('text', (delta) => deltas.push(delta));
  const message = await stream.finalMessage();
  expect(deltas).toEqual(CHUNKS);
  expect(message.content).toEqual([{ type: 'text', text: RECORDED }]);
  expect(message.stop_reason).toBe('max_tokens');
  expect(message.usage).toMatchObject({ input_tokens: 25, output_tokens: 7 });

  const answer = await anthropic.messages.create(request);
  expect(answer.content).toEqual([{ type: 'text', text: RECORDED }]);
  expect(answer.stop_reason).toBe('max_tokens');
});

it.each([
  ['end_turn, as the reference allows (the default)', {}, 'end_turn'],
  ['stop_sequence, the Anthropic-native value, when the scenario asks', { messages_stop_reason: 'stop_sequence' }, 'stop_sequence'],
])('ends a recorded Messages answer at its stop sequence with stop_reason %s and the sequence, streamed or not', async (_name, choice, reason) => {
  const request = { model: 'svc-text-pro', max_tokens: 64, system: SYSTEM, stop_sequences: ['END', '###'], messages: [{ role: 'user' as const, content: QUESTION }] };
  await loadFixture('recorded-messages', messagesFormat, request, { chunks: CHUNKS, finish: 'stop_sequence', stop_sequence: '###', output_tokens: 7, ...choice });
  const answer = await anthropic.messages.create(request);
  expect(answer.content).toEqual([{ type: 'text', text: RECORDED }]);
  expect(answer.stop_reason).toBe(reason);
  expect(answer.stop_sequence).toBe('###');

  const deltas: string[] = [];
  const stream = anthropic.messages.stream(request);
  stream.on('text', (delta) => deltas.push(delta));
  const message = await stream.finalMessage();
  expect(deltas).toEqual(CHUNKS);
  expect(message.stop_reason).toBe(reason);
  expect(message.stop_sequence).toBe('###');
  expect(message.usage.output_tokens).toBe(7);
});

it('ends a recorded stop-sequence answer as chat finish_reason stop and a completed response', async () => {
  const chat = { ...CHAT, stop: ['###'] };
  await loadFixture('recorded-chat', chatFormat, chat, { chunks: CHUNKS, finish: 'stop_sequence', stop_sequence: '###' });
  const completion = await openai.chat.completions.create({ ...chat, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[] });
  expect(completion.choices[0]?.message.content).toBe(RECORDED);
  expect(completion.choices[0]?.finish_reason).toBe('stop');
  let finish: string | null = null;
  for await (const chunk of await openai.chat.completions.create({ ...chat, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[], stream: true })) {
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  expect(finish).toBe('stop');

  const request = { model: 'svc-text-pro', instructions: SYSTEM, input: QUESTION };
  await loadFixture('recorded-responses', responsesFormat, request, { chunks: CHUNKS, finish: 'stop_sequence', stop_sequence: '###' });
  const response = await openai.responses.create(request);
  expect(response.status).toBe('completed');
  expect(response.output_text).toBe(RECORDED);
});

it('paces a recorded stream with first_token_ms and chunk_interval_ms in real time', async () => {
  await loadFixture('recorded-chat', chatFormat, CHAT, { chunks: CHUNKS, first_token_ms: 40, chunk_interval_ms: 15 });
  const started = performance.now();
  const arrivals: number[] = [];
  const stream = await openai.chat.completions.create({ ...CHAT, messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[], stream: true });
  for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(performance.now() - started);
  expect(arrivals).toHaveLength(CHUNKS.length);
  // Lower bounds only: a loaded machine may be later, never earlier.
  expect(arrivals[0]).toBeGreaterThanOrEqual(39);
  expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(15 * (CHUNKS.length - 1) - 6);
});

it('never picks a text_request scenario for a task submission', async () => {
  await loadFixture('recorded-chat', chatFormat, CHAT, { chunks: CHUNKS });
  // The only other rule of a scenario with a text_request fits every submission of the model: still not chosen.
  const fingerprint = textFingerprint(chatFormat, CHAT);
  const loaded = await admin('POST', '/_emulator/scenarios', {
    scenarios: [{ name: 'text-only', outcome: 'rejected', match: { models: ['social-notes-data', 'svc-text-pro'], text_request: fingerprint }, text: {} }],
  });
  expect(loaded.status).toBe(201);
  const res = await fetch(`${base}/v1/tasks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'search', keyword: 'coffee', agree: true } }),
  });
  expect(res.status).toBe(200);
  const task = (await res.json()) as { id: string };
  expect((await admin<{ scenario: string }>('GET', `/_emulator/tasks/${task.id}`)).body.scenario).toBe('default');
});

it.each([
  ['a text_request that is not a fingerprint', { match: { text_request: 'sha256:abc' } }, 'scenarios[0].match.text_request'],
  ['both text and chunks', { text: { text: 'hi', chunks: ['hi'] } }, 'scenarios[0].text'],
  ['an unknown finish', { text: { chunks: ['hi'], finish: 'tool_calls' } }, 'scenarios[0].text.finish'],
  ['a finish without chunks', { text: { finish: 'length' } }, 'scenarios[0].text'],
  ['a finish stop_sequence without its stop_sequence', { text: { chunks: ['hi'], finish: 'stop_sequence' } }, 'scenarios[0].text.stop_sequence'],
  ['a stop_sequence with another finish', { text: { chunks: ['hi'], finish: 'length', stop_sequence: '###' } }, 'scenarios[0].text.finish'],
  ['a stop_sequence without a finish', { text: { chunks: ['hi'], stop_sequence: '###' } }, 'scenarios[0].text.finish'],
  ['an empty stop_sequence', { text: { chunks: ['hi'], finish: 'stop_sequence', stop_sequence: '' } }, 'scenarios[0].text.stop_sequence'],
  ['a chunk that is not a string', { text: { chunks: ['hi', 3] } }, 'scenarios[0].text.chunks[1]'],
])('refuses a scenario with %s, naming the field', async (_name, fields, field) => {
  const res = await admin<{ error: { code: string; details: { field: string; message: string }[] } }>('POST', '/_emulator/scenarios', {
    scenarios: [{ name: 'bad', outcome: 'succeeded', ...fields }],
  });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.details.map((d) => d.field)).toContain(field);
});
