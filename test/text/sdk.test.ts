import Anthropic from '@anthropic-ai/sdk';
import type { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import { Stream as AnthropicStream } from '@anthropic-ai/sdk/core/streaming';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Big from 'big.js';
import OpenAI from 'openai';
import type { APIError as OpenAIAPIError } from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { TEXT_MODELS } from '../support/text-models.ts';
import type { TextModel } from '../../src/models/index.ts';

// The three text endpoints driven by the official SDKs, with nothing changed but the base address and the key
// (and maxRetries: 0, so a failing call fails at once instead of the SDK sleeping before a retry).

interface LedgerRow {
  kind: string;
  points: string;
  call_id?: string;
}
interface Balances {
  available: string;
  frozen: string;
  charged: string;
}

const MODELS = TEXT_MODELS;
const modelOf = (id: string): TextModel => {
  const model = MODELS.find((m) => m.id === id);
  if (!model) throw new Error(`fixtures/text-models.json has no ${id}`);
  return model;
};
const PRO = modelOf('svc-text-pro');
const LITE = modelOf('svc-text-lite');
const ADMIN_TOKEN = 'x';
const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const SCENARIO = 'X-Emulator-Scenario';

let emulator: Emulator;
let base: string;
let account: { id: string; key: string };
let openai: OpenAI;
let anthropic: Anthropic;

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN_TOKEN, log: () => undefined });
  base = await emulator.listen(0);
  account = await newAccount('1000.000');
  openai = openaiFor(account.key);
  anthropic = anthropicFor(account.key);
});
afterEach(() => emulator.close());

const openaiFor = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 });
const anthropicFor = (apiKey: string): Anthropic => new Anthropic({ baseURL: base, apiKey, maxRetries: 0 });

async function admin<T>(path: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as T;
}

async function newAccount(points: string): Promise<{ id: string; key: string }> {
  const created = await admin<{ id: string }>('/_emulator/accounts', { points });
  const key = await admin<{ key: string }>(`/_emulator/accounts/${created.id}/keys`, {});
  return { id: created.id, key: key.key };
}

const balances = async (accountId = account.id): Promise<Balances> => {
  const { available, frozen, charged } = await admin<Balances>(`/_emulator/accounts/${accountId}`);
  return { available, frozen, charged };
};
const ledger = async (accountId = account.id): Promise<LedgerRow[]> =>
  (await admin<{ data: LedgerRow[] }>(`/_emulator/accounts/${accountId}/ledger`)).data;
const ledgerOf = async (callId: string): Promise<[string, string][]> =>
  (await ledger()).filter((e) => e.call_id === callId).map((e) => [e.kind, e.points]);
const callRecord = (requestId: string | null | undefined) => {
  expect(requestId).toMatch(REQUEST_ID);
  return emulator.internals.db.calls.get(requestId ?? '');
};

/** Points as the reference writes them: decimal, rounded to three places. */
const points = (value: Big): string => value.round(3, Big.roundHalfUp).toFixed(3);
const tokenCost = (model: TextModel, input: number, output: number): string =>
  points(new Big(model.input_per_million).times(input).plus(new Big(model.output_per_million).times(output)).div(1_000_000));

/** The error a promise rejects with; a promise that resolves fails the test. */
async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Everything a stream yields, and the error that ended it (undefined when it ended normally). */
async function drain<T>(stream: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of stream) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items, error: undefined };
}

/** A word of the answer (at least 4 letters, not at its start) to stop on. */
function stopWordOf(text: string): string {
  const word = text
    .split(/[^A-Za-z]+/)
    .slice(3)
    .find((w) => w.length >= 4 && text.indexOf(w) > 0);
  if (!word) throw new Error(`no word to stop on in ${JSON.stringify(text)}`);
  return word;
}

const MESSAGES: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Answer in plain sentences.' },
  { role: 'user', content: 'How should I plan a small project?' },
];
type ChatRequest = Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'stream'>;
type ResponseRequest = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>;
type MessageRequest = Omit<Anthropic.MessageCreateParamsNonStreaming, 'stream'>;
const chat = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'svc-text-pro',
  messages: MESSAGES,
  ...extra,
});
const responseRequest = (extra: Partial<ResponseRequest> = {}): ResponseRequest => ({
  model: 'svc-text-pro',
  instructions: 'Answer in plain sentences.',
  input: 'How should I plan a small project?',
  ...extra,
});
const message = (extra: Partial<MessageRequest> = {}): MessageRequest => ({
  model: 'svc-text-pro',
  max_tokens: 256,
  system: 'Answer in plain sentences.',
  messages: [{ role: 'user', content: 'How should I plan a small project?' }],
  ...extra,
});
const textOf = (msg: Anthropic.Message): string => msg.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

// ---------------------------------------------------------------------------------------------------------------
// openai: chat.completions

it('openai chat.completions.create answers with a svcchat_ id, the model snapshot, usage that adds up and finish_reason stop', async () => {
  const completion = await openai.chat.completions.create(chat());
  expect(completion.id).toMatch(/^svcchat_[A-Za-z0-9]+$/);
  expect(completion.object).toBe('chat.completion');
  expect(completion.model).toBe(PRO.snapshot);
  expect(completion.choices).toHaveLength(1);
  const [choice] = completion.choices;
  expect(choice?.index).toBe(0);
  expect(choice?.finish_reason).toBe('stop');
  expect(choice?.message.role).toBe('assistant');
  const content = choice?.message.content ?? '';
  expect(content.length).toBeGreaterThan(0);
  const usage = completion.usage;
  expect(usage?.prompt_tokens).toBeGreaterThan(0);
  expect(usage?.completion_tokens).toBeGreaterThan(0);
  expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? NaN) + (usage?.completion_tokens ?? NaN));
  // The SDK reads X-Request-Id, the emulator's header; the call record under that id holds the same tokens.
  const record = callRecord(completion._request_id);
  expect(record).toMatchObject({
    account_id: account.id,
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    error_code: null,
    // The record keeps the model code the call named, so records can be filtered by it.
    model: PRO.id,
    text: { stream: false, input_tokens: usage?.prompt_tokens, output_tokens: usage?.completion_tokens, client_closed: false },
  });
});

it('openai chat with max_tokens 5 stops at 5 completion tokens with finish_reason length', async () => {
  const full = await openai.chat.completions.create(chat());
  const cut = await openai.chat.completions.create(chat({ max_tokens: 5 }));
  expect(cut.choices[0]?.finish_reason).toBe('length');
  expect(cut.usage?.completion_tokens).toBe(5);
  expect(cut.usage?.total_tokens).toBe((cut.usage?.prompt_tokens ?? NaN) + 5);
  // The same answer, cut after five words.
  const content = cut.choices[0]?.message.content ?? '';
  expect(content.trim().split(/\s+/)).toHaveLength(5);
  expect(full.choices[0]?.message.content?.startsWith(content)).toBe(true);
  expect(content.length).toBeLessThan(full.choices[0]?.message.content?.length ?? 0);
});

it('openai chat with max_completion_tokens 5 is cut the same way as max_tokens 5', async () => {
  const cut = await openai.chat.completions.create(chat({ max_completion_tokens: 5 }));
  expect(cut.choices[0]?.finish_reason).toBe('length');
  expect(cut.usage?.completion_tokens).toBe(5);
});

it('openai chat gives the same text for the same request and seed, and a different text for a different prompt or seed', async () => {
  const first = await openai.chat.completions.create(chat({ seed: 7 }));
  const again = await openai.chat.completions.create(chat({ seed: 7 }));
  const otherPrompt = await openai.chat.completions.create(chat({ seed: 7, messages: [{ role: 'user', content: 'Describe a good video.' }] }));
  const otherSeed = await openai.chat.completions.create(chat({ seed: 8 }));
  const text = first.choices[0]?.message.content;
  expect(text).toBeTruthy();
  expect(again.choices[0]?.message.content).toBe(text);
  expect(again.usage).toEqual(first.usage);
  expect(again.id).not.toBe(first.id);
  expect(otherPrompt.choices[0]?.message.content).not.toBe(text);
  expect(otherSeed.choices[0]?.message.content).not.toBe(text);
});

it('openai chat with stop set to a word of the answer cuts the answer just before that word', async () => {
  const full = (await openai.chat.completions.create(chat())).choices[0]?.message.content ?? '';
  const word = stopWordOf(full);
  const stopped = await openai.chat.completions.create(chat({ stop: [word] }));
  const content = stopped.choices[0]?.message.content ?? '';
  expect(content).toBe(full.slice(0, full.indexOf(word)).trimEnd());
  expect(content).not.toContain(word);
  expect(stopped.choices[0]?.finish_reason).toBe('stop');
  expect(stopped.usage?.completion_tokens).toBe(content.match(/\S+/g)?.length ?? 0);
});

it('openai chat with response_format json_object answers with text that JSON.parse accepts as an object', async () => {
  const completion = await openai.chat.completions.create(chat({ response_format: { type: 'json_object' } }));
  const content = completion.choices[0]?.message.content ?? '';
  const parsed: unknown = JSON.parse(content);
  expect(typeof parsed).toBe('object');
  expect(parsed).not.toBeNull();
  expect(Array.isArray(parsed)).toBe(false);
  expect(completion.choices[0]?.finish_reason).toBe('stop');
});

it('openai chat with a json_schema response_format answers with JSON valid against the schema', async () => {
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string' },
      steps: { type: 'integer', minimum: 1, maximum: 10 },
      score: { type: 'number', minimum: 0, maximum: 5 },
      urgent: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
      level: { type: 'string', enum: ['low', 'mid', 'high'] },
    },
    required: ['title', 'steps', 'score', 'urgent', 'tags', 'level'],
    additionalProperties: false,
  };
  const completion = await openai.chat.completions.create(
    chat({ response_format: { type: 'json_schema', json_schema: { name: 'plan', schema, strict: true } } }),
  );
  const parsed: unknown = JSON.parse(completion.choices[0]?.message.content ?? '');
  const validate = new Ajv2020({ strict: true }).compile(schema);
  expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
  expect(completion.choices[0]?.finish_reason).toBe('stop');
});

it('openai chat with tools and a named tool_choice answers with a call to that tool whose arguments fit its parameters', async () => {
  const parameters = {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: { type: 'integer', minimum: 1, maximum: 7 },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      hourly: { type: 'boolean' },
    },
    required: ['city', 'days', 'unit', 'hourly'],
    additionalProperties: false,
  };
  const completion = await openai.chat.completions.create(
    chat({
      tools: [
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
        { type: 'function', function: { name: 'get_forecast', description: 'Weather forecast', parameters } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_forecast' } },
    }),
  );
  const [choice] = completion.choices;
  expect(choice?.finish_reason).toBe('tool_calls');
  expect(choice?.message.content).toBeNull();
  expect(choice?.message.tool_calls).toHaveLength(1);
  const call = choice?.message.tool_calls?.[0];
  expect(call?.type).toBe('function');
  expect(call?.id).toEqual(expect.any(String));
  if (call?.type !== 'function') throw new Error('expected a function tool call');
  expect(call.function.name).toBe('get_forecast');
  const args: unknown = JSON.parse(call.function.arguments);
  const validate = new Ajv2020({ strict: true }).compile(parameters);
  expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
  expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
});

it('cuts a forced tool call at max_tokens like any answer (finish length), so its freeze is the formula and a small balance pays for it', async () => {
  const tools = [{ type: 'function' as const, function: { name: 'note', parameters: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } }, required: ['title', 'body'] } } }];
  // 1.000 points: the formula's freeze (input price × input tokens + output price × 1) fits; the whole call did not.
  const small = await newAccount('1.000');
  const { data: completion, response } = await openaiFor(small.key).chat.completions.create(chat({ max_tokens: 1, tools, tool_choice: 'required' })).withResponse();
  const [choice] = completion.choices;
  expect(choice?.finish_reason).toBe('length');
  const call = choice?.message.tool_calls?.[0];
  if (call?.type !== 'function') throw new Error('expected a function tool call');
  expect(call.function.name).toBe('note');
  expect(call.function.arguments.length).toBeLessThanOrEqual(4);
  expect(completion.usage?.completion_tokens).toBe(1);
  const requestId = response.headers.get('x-request-id') ?? '';
  const entries = (await ledger(small.id)).filter((e) => e.call_id === requestId).map((e) => [e.kind, e.points]);
  expect(entries[0]).toEqual(['freeze', tokenCost(PRO, completion.usage?.prompt_tokens ?? 0, 1)]);
  expect(entries.every(([, points]) => !String(points).startsWith('-'))).toBe(true);
  expect((await balances(small.id)).frozen).toBe('0.000');
});

it('openai chat streamed with include_usage delivers the non-streamed content piece by piece, then a usage chunk with empty choices', async () => {
  const whole = await openai.chat.completions.create(chat());
  const { data: stream, request_id } = await openai.chat.completions
    .create({ ...chat(), stream: true, stream_options: { include_usage: true } })
    .withResponse();
  const { items: chunks, error } = await drain(stream);
  expect(error).toBeUndefined();
  expect(chunks.length).toBeGreaterThan(3);
  for (const chunk of chunks) {
    expect(chunk.object).toBe('chat.completion.chunk');
    expect(chunk.id).toBe(chunks[0]?.id);
    expect(chunk.model).toBe(PRO.snapshot);
  }
  expect(chunks[0]?.id).toMatch(/^svcchat_/);
  expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
  const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  expect(content).toBe(whole.choices[0]?.message.content);
  const last = chunks.at(-1);
  const lastContent = chunks.at(-2);
  expect(last?.choices).toEqual([]);
  expect(last?.usage).toEqual(whole.usage);
  expect(lastContent?.choices[0]?.finish_reason).toBe('stop');
  expect(chunks.slice(0, -2).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
  expect(callRecord(request_id)?.text).toMatchObject({ stream: true, output_tokens: whole.usage?.completion_tokens, client_closed: false });
});

it('openai chat streamed without include_usage sends no usage chunk', async () => {
  const stream = await openai.chat.completions.create({ ...chat({ max_tokens: 5 }), stream: true });
  const { items: chunks, error } = await drain(stream);
  expect(error).toBeUndefined();
  expect(chunks.every((c) => c.choices.length === 1 && !c.usage)).toBe(true);
  expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
  expect(chunks.filter((c) => c.choices[0]?.delta.content)).toHaveLength(5);
});

it('openai chat.completions.stream helper assembles the same completion as the non-streamed call', async () => {
  const whole = await openai.chat.completions.create(chat());
  const runner = openai.chat.completions.stream({ ...chat(), stream_options: { include_usage: true } });
  const deltas: string[] = [];
  runner.on('content', (delta) => deltas.push(delta));
  const final = await runner.finalChatCompletion();
  expect(final.id).toMatch(/^svcchat_/);
  expect(final.model).toBe(PRO.snapshot);
  expect(final.choices[0]?.message.content).toBe(whole.choices[0]?.message.content);
  expect(final.choices[0]?.finish_reason).toBe('stop');
  expect(final.usage).toEqual(whole.usage);
  expect(deltas.join('')).toBe(whole.choices[0]?.message.content);
  expect(deltas).toHaveLength(whole.usage?.completion_tokens ?? NaN);
});

// ---------------------------------------------------------------------------------------------------------------
// openai: responses

it('openai responses.create answers with a svcresp_ id, output_text, usage, store false and status completed', async () => {
  const response = await openai.responses.create(responseRequest());
  expect(response.id).toMatch(/^svcresp_[A-Za-z0-9]+$/);
  expect(response.object).toBe('response');
  expect(response.model).toBe(PRO.snapshot);
  expect(response.status).toBe('completed');
  expect(response.incomplete_details).toBeNull();
  expect(response).toMatchObject({ store: false });
  expect(response.output_text.length).toBeGreaterThan(0);
  expect(response.output).toHaveLength(1);
  const usage = response.usage;
  expect(usage?.input_tokens).toBeGreaterThan(0);
  expect(usage?.output_tokens).toBe(response.output_text.match(/\S+/g)?.length);
  expect(usage?.total_tokens).toBe((usage?.input_tokens ?? NaN) + (usage?.output_tokens ?? NaN));
  expect(callRecord(response._request_id)).toMatchObject({
    path: '/v1/responses',
    status: 200,
    // The record keeps the model code the call named, so records can be filtered by it.
    model: PRO.id,
    text: { stream: false, input_tokens: usage?.input_tokens, output_tokens: usage?.output_tokens },
  });
});

it('openai responses with max_output_tokens 5 is incomplete for reason max_output_tokens', async () => {
  const response = await openai.responses.create(responseRequest({ max_output_tokens: 5 }));
  expect(response.status).toBe('incomplete');
  expect(response.incomplete_details?.reason).toBe('max_output_tokens');
  expect(response.usage?.output_tokens).toBe(5);
  expect(response.output_text.trim().split(/\s+/)).toHaveLength(5);
  expect(response.max_output_tokens).toBe(5);
});

it('openai responses streamed sends the events in the reference order with sequence_number 0, 1, 2, …', async () => {
  const whole = await openai.responses.create(responseRequest());
  const stream = await openai.responses.create({ ...responseRequest(), stream: true });
  const { items: events, error } = await drain(stream);
  expect(error).toBeUndefined();
  const tokens = whole.usage?.output_tokens ?? NaN;
  expect(events.map((e) => e.type)).toEqual([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    ...Array<string>(tokens).fill('response.output_text.delta'),
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  const text = events.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');
  expect(text).toBe(whole.output_text);
  const done = events.find((e) => e.type === 'response.output_text.done');
  expect(done?.type === 'response.output_text.done' ? done.text : null).toBe(whole.output_text);
  const completed = events.at(-1);
  if (completed?.type !== 'response.completed') throw new Error('the stream did not end with response.completed');
  expect(completed.response.status).toBe('completed');
  expect(completed.response.usage).toEqual(whole.usage);
  expect(completed.response.id).toMatch(/^svcresp_/);
});

it('openai responses streamed past max_output_tokens ends with response.incomplete', async () => {
  const stream = await openai.responses.create({ ...responseRequest({ max_output_tokens: 5 }), stream: true });
  const { items: events, error } = await drain(stream);
  expect(error).toBeUndefined();
  expect(events.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(5);
  const last = events.at(-1);
  expect(last?.type).toBe('response.incomplete');
  if (last?.type !== 'response.incomplete') return;
  expect(last.response.incomplete_details?.reason).toBe('max_output_tokens');
});

it('openai responses.stream helper resolves finalResponse with the same text as the non-streamed call', async () => {
  const whole = await openai.responses.create(responseRequest());
  const stream = openai.responses.stream(responseRequest());
  const deltas: string[] = [];
  stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
  const final = await stream.finalResponse();
  expect(final.id).toMatch(/^svcresp_/);
  expect(final.status).toBe('completed');
  expect(final).toMatchObject({ store: false });
  expect(final.output_text).toBe(whole.output_text);
  expect(final.usage).toEqual(whole.usage);
  expect(deltas.join('')).toBe(whole.output_text);
});

it.each([
  ['previous_response_id', { previous_response_id: 'svcresp_abc123' }],
  ['tools', { tools: [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }] }],
])('openai responses with %s throws an APIError 422 invalid_params and charges nothing', async (field, extra) => {
  const err = await rejection(openai.responses.create(responseRequest(extra)));
  expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  expect(err).toMatchObject({ status: 422, code: 'invalid_params', type: 'invalid_params', param: field });
  expect((err as OpenAIAPIError).requestID).toMatch(REQUEST_ID);
  expect(await balances()).toEqual({ available: '1000.000', frozen: '0.000', charged: '0.000' });
});

// ---------------------------------------------------------------------------------------------------------------
// anthropic: messages

it('anthropic messages.create answers with a svcmsg_ id, text content, stop_reason end_turn and usage', async () => {
  const { data: msg, response } = await anthropic.messages.create(message()).withResponse();
  expect(msg.id).toMatch(/^svcmsg_[A-Za-z0-9]+$/);
  expect(msg.type).toBe('message');
  expect(msg.role).toBe('assistant');
  expect(msg.model).toBe(PRO.snapshot);
  expect(msg.content).toHaveLength(1);
  expect(msg.content[0]?.type).toBe('text');
  const text = textOf(msg);
  expect(text.length).toBeGreaterThan(0);
  expect(msg.stop_reason).toBe('end_turn');
  expect(msg.stop_sequence).toBeNull();
  expect(msg.usage.input_tokens).toBeGreaterThan(0);
  expect(msg.usage.output_tokens).toBe(text.match(/\S+/g)?.length);
  // The Anthropic SDK fills `_request_id` / `request_id` from a `request-id` header; the emulator sends the
  // reference's X-Request-Id, so the id is read from the raw response.
  const requestId = response.headers.get('x-request-id');
  expect(callRecord(requestId)).toMatchObject({
    account_id: account.id,
    path: '/v1/messages',
    status: 200,
    // The record keeps the model code the call named, so records can be filtered by it.
    model: PRO.id,
    text: { stream: false, input_tokens: msg.usage.input_tokens, output_tokens: msg.usage.output_tokens },
  });
});

it('anthropic messages with max_tokens 5 stops with stop_reason max_tokens after 5 output tokens', async () => {
  const full = await anthropic.messages.create(message());
  const msg = await anthropic.messages.create(message({ max_tokens: 5 }));
  expect(msg.stop_reason).toBe('max_tokens');
  expect(msg.usage.output_tokens).toBe(5);
  expect(textOf(full).startsWith(textOf(msg))).toBe(true);
  expect(textOf(msg).trim().split(/\s+/)).toHaveLength(5);
});

it('anthropic messages with stop_sequences stops before the sequence with stop_reason end_turn (the reference allows end_turn or max_tokens) and names it', async () => {
  const full = textOf(await anthropic.messages.create(message()));
  const word = stopWordOf(full);
  const msg = await anthropic.messages.create(message({ stop_sequences: ['no such sequence', word] }));
  expect(msg.stop_reason).toBe('end_turn');
  expect(msg.stop_sequence).toBe(word);
  expect(textOf(msg)).toBe(full.slice(0, full.indexOf(word)).trimEnd());
  expect(msg.usage.output_tokens).toBe(textOf(msg).match(/\S+/g)?.length ?? 0);
});

it('anthropic messages.stream helper resolves finalMessage with the same message as messages.create', async () => {
  const whole = await anthropic.messages.create(message());
  const stream = anthropic.messages.stream(message());
  const deltas: string[] = [];
  stream.on('text', (delta) => deltas.push(delta));
  const final = await stream.finalMessage();
  expect(final.id).toMatch(/^svcmsg_/);
  expect(final.model).toBe(PRO.snapshot);
  expect(textOf(final)).toBe(textOf(whole));
  expect(final.stop_reason).toBe('end_turn');
  expect(final.usage.input_tokens).toBe(whole.usage.input_tokens);
  expect(final.usage.output_tokens).toBe(whole.usage.output_tokens);
  expect(deltas.join('')).toBe(textOf(whole));
  expect(await stream.finalText()).toBe(textOf(whole));
});

it('anthropic messages.create with stream true yields the events in the reference order (the SDK drops ping)', async () => {
  const whole = await anthropic.messages.create(message());
  const stream = await anthropic.messages.create({ ...message(), stream: true });
  const { items: events, error } = await drain(stream);
  expect(error).toBeUndefined();
  expect(events.map((e) => e.type)).toEqual([
    'message_start',
    'content_block_start',
    ...Array<string>(whole.usage.output_tokens).fill('content_block_delta'),
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
  const start = events[0];
  if (start?.type !== 'message_start') throw new Error('no message_start');
  expect(start.message.id).toMatch(/^svcmsg_/);
  expect(start.message.model).toBe(PRO.snapshot);
  expect(start.message.usage.input_tokens).toBe(whole.usage.input_tokens);
  const text = events.map((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : '')).join('');
  expect(text).toBe(textOf(whole));
  const delta = events.find((e) => e.type === 'message_delta');
  if (delta?.type !== 'message_delta') throw new Error('no message_delta');
  expect(delta.delta.stop_reason).toBe('end_turn');
  expect(delta.usage.output_tokens).toBe(whole.usage.output_tokens);
});

it('anthropic streamed messages carry a ping event after content_block_start on the wire', async () => {
  const response = await anthropic.messages.create({ ...message({ max_tokens: 3 }), stream: true }).asResponse();
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(response.headers.get('cache-control')).toContain('no-cache');
  expect(response.headers.get('x-accel-buffering')).toBe('no');
  const names: (string | null)[] = [];
  for await (const sse of AnthropicStream.rawEvents(response)) names.push(sse.event);
  expect(names).toEqual([
    'message_start',
    'content_block_start',
    'ping',
    'content_block_delta',
    'content_block_delta',
    'content_block_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
});

it('anthropic messages streamed past max_tokens ends with message_delta stop_reason max_tokens', async () => {
  const final = await anthropic.messages.stream(message({ max_tokens: 5 })).finalMessage();
  expect(final.stop_reason).toBe('max_tokens');
  expect(final.usage.output_tokens).toBe(5);
});

/** An Anthropic client that records the request headers it sends. */
function recordingAnthropic(options: ConstructorParameters<typeof Anthropic>[0]): { client: Anthropic; sent: Headers[] } {
  const sent: Headers[] = [];
  const client = new Anthropic({
    baseURL: base,
    maxRetries: 0,
    ...options,
    fetch: (url, init) => {
      sent.push(new Headers(init?.headers));
      return fetch(url, init);
    },
  });
  return { client, sent };
}

it('the anthropic SDK sends its apiKey as Authorization: Bearer (not x-api-key), which the emulator accepts', async () => {
  const { client, sent } = recordingAnthropic({ apiKey: account.key });
  const { data: msg, response } = await client.messages.create(message()).withResponse();
  expect(sent).toHaveLength(1);
  expect(sent[0]?.get('authorization')).toBe(`Bearer ${account.key}`);
  expect(sent[0]?.get('x-api-key')).toBeNull();
  // Version headers the SDK attaches are ignored.
  expect(sent[0]?.get('anthropic-version')).toEqual(expect.any(String));
  expect(msg.stop_reason).toBe('end_turn');
  expect(callRecord(response.headers.get('x-request-id'))).toMatchObject({ account_id: account.id, status: 200 });
});

it('the anthropic SDK with the key set as x-api-key and no Authorization is accepted for the key’s account', async () => {
  const { client, sent } = recordingAnthropic({ apiKey: null, defaultHeaders: { 'x-api-key': account.key } });
  const { data: msg, response } = await client.messages.create(message()).withResponse();
  expect(sent).toHaveLength(1);
  expect(sent[0]?.get('x-api-key')).toBe(account.key);
  expect(sent[0]?.get('authorization')).toBeNull();
  expect(msg.id).toMatch(/^svcmsg_/);
  expect(msg.stop_reason).toBe('end_turn');
  const requestId = response.headers.get('x-request-id');
  expect(callRecord(requestId)).toMatchObject({ account_id: account.id, status: 200, path: '/v1/messages' });
  expect((await ledgerOf(requestId ?? '')).map(([kind]) => kind)).toEqual(['freeze', 'charge', 'refund']);
  expect((await balances()).charged).toBe(tokenCost(PRO, msg.usage.input_tokens, msg.usage.output_tokens));
});

it('the anthropic SDK with a wrong x-api-key throws an AuthenticationError 401 of type invalid_api_key', async () => {
  const { client, sent } = recordingAnthropic({ apiKey: null, defaultHeaders: { 'x-api-key': 'sk-not-a-real-key' } });
  const err = await rejection(client.messages.create(message()));
  expect(sent[0]?.get('authorization')).toBeNull();
  expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
  expect(err).toMatchObject({ status: 401, type: 'invalid_api_key' });
  expect(callRecord((err as AnthropicAPIError).headers?.get('x-request-id'))).toMatchObject({ status: 401, error_code: 'invalid_api_key', account_id: null });
});

it('anthropic with a wrong apiKey throws an AuthenticationError 401 of type invalid_api_key', async () => {
  const err = await rejection(anthropicFor('sk-not-a-real-key').messages.create(message()));
  expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
  expect(err).toMatchObject({ status: 401, type: 'invalid_api_key' });
  const body = (err as AnthropicAPIError).error as { type: string; error: { type: string; code: string; request_id: string } };
  expect(body.type).toBe('error');
  expect(body.error).toMatchObject({ type: 'invalid_api_key', code: 'invalid_api_key', request_id: expect.stringMatching(REQUEST_ID) });
  expect((err as AnthropicAPIError).headers?.get('x-request-id')).toBe(body.error.request_id);
});

it('openai with a wrong key throws an AuthenticationError 401 with code invalid_api_key', async () => {
  const err = await rejection(openaiFor('sk-not-a-real-key').chat.completions.create(chat()));
  expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
  expect((err as OpenAIAPIError).requestID).toMatch(REQUEST_ID);
});

it('anthropic messages with tools throws an APIError 422 invalid_params and charges nothing', async () => {
  const err = await rejection(
    anthropic.messages.create(message({ tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }] })),
  );
  expect(err).toBeInstanceOf(Anthropic.UnprocessableEntityError);
  expect(err).toMatchObject({ status: 422, type: 'invalid_params' });
  expect(((err as AnthropicAPIError).error as { error: { code: string } }).error.code).toBe('invalid_params');
  expect(await balances()).toEqual({ available: '1000.000', frozen: '0.000', charged: '0.000' });
});

// ---------------------------------------------------------------------------------------------------------------
// Errors through the SDKs

it('an unknown model throws NotFoundError 404 model_unavailable in every SDK call', async () => {
  const chatErr = await rejection(openai.chat.completions.create(chat({ model: 'svc-text-nonexistent' })));
  expect(chatErr).toBeInstanceOf(OpenAI.NotFoundError);
  expect(chatErr).toMatchObject({ status: 404, code: 'model_unavailable' });
  const responsesErr = await rejection(openai.responses.create(responseRequest({ model: 'svc-text-nonexistent' })));
  expect(responsesErr).toBeInstanceOf(OpenAI.NotFoundError);
  expect(responsesErr).toMatchObject({ status: 404, code: 'model_unavailable' });
  const messagesErr = await rejection(anthropic.messages.create(message({ model: 'svc-text-nonexistent' })));
  expect(messagesErr).toBeInstanceOf(Anthropic.NotFoundError);
  expect(messagesErr).toMatchObject({ status: 404, type: 'model_unavailable' });
  // A task model is not a text model either.
  const taskModelErr = await rejection(openai.chat.completions.create(chat({ model: 'social-notes-data' })));
  expect(taskModelErr).toMatchObject({ status: 404, code: 'model_unavailable' });
  expect(await ledger()).not.toContainEqual(expect.objectContaining({ call_id: expect.any(String) }));
});

it('openai chat with n 2 throws an APIError 422 invalid_params for n', async () => {
  const err = await rejection(openai.chat.completions.create(chat({ n: 2 })));
  expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  expect(err).toMatchObject({ status: 422, code: 'invalid_params', param: 'n' });
});

it('a maximum output above the model limit throws 422 invalid_params in each format, and the limit itself is accepted', async () => {
  const chatErr = await rejection(openai.chat.completions.create(chat({ max_tokens: PRO.max_output_tokens + 1 })));
  expect(chatErr).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  expect(chatErr).toMatchObject({ status: 422, code: 'invalid_params', param: 'max_tokens' });
  const completionErr = await rejection(openai.chat.completions.create(chat({ max_completion_tokens: PRO.max_output_tokens + 1 })));
  expect(completionErr).toMatchObject({ status: 422, code: 'invalid_params', param: 'max_completion_tokens' });
  const responsesErr = await rejection(openai.responses.create(responseRequest({ max_output_tokens: PRO.max_output_tokens + 1 })));
  expect(responsesErr).toMatchObject({ status: 422, code: 'invalid_params', param: 'max_output_tokens' });
  // The limit is per model: lite's is lower than pro's.
  const messagesErr = await rejection(anthropic.messages.create(message({ model: 'svc-text-lite', max_tokens: LITE.max_output_tokens + 1 })));
  expect(messagesErr).toBeInstanceOf(Anthropic.UnprocessableEntityError);
  expect(messagesErr).toMatchObject({ status: 422, type: 'invalid_params' });
  expect(await balances()).toEqual({ available: '1000.000', frozen: '0.000', charged: '0.000' });

  const atLimit = await openai.chat.completions.create(chat({ max_tokens: PRO.max_output_tokens }));
  expect(atLimit.choices[0]?.finish_reason).toBe('stop');
});

it('the text-rejected scenario throws 422 content_rejected in each SDK and charges nothing', async () => {
  const headers = { [SCENARIO]: 'text-rejected' };
  const chatErr = await rejection(openai.chat.completions.create(chat(), { headers }));
  expect(chatErr).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  expect(chatErr).toMatchObject({ status: 422, code: 'content_rejected' });
  const responsesErr = await rejection(openai.responses.create(responseRequest(), { headers }));
  expect(responsesErr).toMatchObject({ status: 422, code: 'content_rejected' });
  const messagesErr = await rejection(anthropic.messages.create(message(), { headers }));
  expect(messagesErr).toBeInstanceOf(Anthropic.UnprocessableEntityError);
  expect(messagesErr).toMatchObject({ status: 422, type: 'content_rejected' });
  const streamErr = await rejection(openai.chat.completions.create({ ...chat(), stream: true }, { headers }));
  expect(streamErr).toMatchObject({ status: 422, code: 'content_rejected' });

  expect(callRecord((chatErr as OpenAIAPIError).requestID)).toMatchObject({ status: 422, error_code: 'content_rejected', account_id: account.id });
  expect(await balances()).toEqual({ available: '1000.000', frozen: '0.000', charged: '0.000' });
  expect(await ledger()).not.toContainEqual(expect.objectContaining({ call_id: expect.any(String) }));
});

const MIDSTREAM = [
  ['text-service-unavailable-midstream', 'service_unavailable'],
  ['text-content-rejected-midstream', 'content_rejected'],
  ['text-invalid-params-midstream', 'invalid_params'],
] as const;

it.each(MIDSTREAM)('openai chat streamed under %s throws an APIError %s after 5 content chunks and refunds everything', async (scenario, code) => {
  const { data: stream, request_id } = await openai.chat.completions
    .create({ ...chat(), stream: true, stream_options: { include_usage: true } }, { headers: { [SCENARIO]: scenario } })
    .withResponse();
  const { items: chunks, error } = await drain(stream);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  expect(error).toMatchObject({ code, type: code });
  expect((error as OpenAIAPIError).error).toMatchObject({ request_id });
  expect(chunks.filter((c) => c.choices[0]?.delta.content)).toHaveLength(5);
  await expectFullRefund(request_id, code);
});

it.each(MIDSTREAM)('openai responses streamed under %s throws an APIError %s after 5 deltas and refunds everything', async (scenario, code) => {
  const { data: stream, request_id } = await openai.responses
    .create({ ...responseRequest(), stream: true }, { headers: { [SCENARIO]: scenario } })
    .withResponse();
  const { items: events, error } = await drain(stream);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  expect(error).toMatchObject({ code });
  expect(events.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(5);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  await expectFullRefund(request_id, code);
});

it.each(MIDSTREAM)('anthropic messages streamed under %s throws an APIError %s after 5 deltas and refunds everything', async (scenario, code) => {
  const { data: stream, response } = await anthropic.messages
    .create({ ...message(), stream: true }, { headers: { [SCENARIO]: scenario } })
    .withResponse();
  const { items: events, error } = await drain(stream);
  expect(error).toBeInstanceOf(Anthropic.APIError);
  expect(error).toMatchObject({ type: code });
  expect(((error as AnthropicAPIError).error as { error: { code: string } }).error.code).toBe(code);
  expect(events.filter((e) => e.type === 'content_block_delta')).toHaveLength(5);
  expect(events.map((e) => e.type)).not.toContain('message_stop');
  await expectFullRefund(response.headers.get('x-request-id'), code);
});

it('anthropic messages.stream helper rejects finalMessage with the mid-stream error', async () => {
  const stream = anthropic.messages.stream(message(), { headers: { [SCENARIO]: 'text-service-unavailable-midstream' } });
  const err = await rejection(stream.finalMessage());
  expect(err).toBeInstanceOf(Anthropic.APIError);
  expect(err).toMatchObject({ type: 'service_unavailable' });
});

async function expectFullRefund(requestId: string | null | undefined, code: string): Promise<void> {
  const record = callRecord(requestId);
  expect(record).toMatchObject({ error_code: code, status: 200, text: { stream: true, output_tokens: 5, client_closed: false } });
  const frozen = record?.text?.points.frozen ?? '';
  expect(record?.text?.points).toEqual({ frozen, charged: '0.000', refunded: frozen });
  expect(await ledgerOf(requestId ?? '')).toEqual([
    ['freeze', frozen],
    ['refund', frozen],
  ]);
  expect(await balances()).toEqual({ available: '1000.000', frozen: '0.000', charged: '0.000' });
}

it('an account with 0.001 points gets 402 insufficient_points from each SDK and nothing is frozen', async () => {
  const poor = await newAccount('0.001');
  const chatErr = await rejection(openaiFor(poor.key).chat.completions.create(chat()));
  expect(chatErr).toBeInstanceOf(OpenAI.APIError);
  expect(chatErr).toMatchObject({ status: 402, code: 'insufficient_points' });
  const responsesErr = await rejection(openaiFor(poor.key).responses.create(responseRequest()));
  expect(responsesErr).toMatchObject({ status: 402, code: 'insufficient_points' });
  const messagesErr = await rejection(anthropicFor(poor.key).messages.create(message()));
  expect(messagesErr).toBeInstanceOf(Anthropic.PaymentRequiredError);
  expect(messagesErr).toMatchObject({ status: 402, type: 'insufficient_points' });
  expect(await balances(poor.id)).toEqual({ available: '0.001', frozen: '0.000', charged: '0.000' });
  expect(await ledger(poor.id)).not.toContainEqual(expect.objectContaining({ call_id: expect.any(String) }));
});

// ---------------------------------------------------------------------------------------------------------------
// Billing through the SDK calls

it('a non-streamed chat call on svc-text-pro freezes input × prompt + output × max_tokens, charges the usage and refunds the rest', async () => {
  const max = 300;
  const { data: completion, request_id } = await openai.chat.completions.create(chat({ max_tokens: max })).withResponse();
  expect(completion.choices[0]?.finish_reason).toBe('stop');
  const prompt = completion.usage?.prompt_tokens ?? NaN;
  const output = completion.usage?.completion_tokens ?? NaN;
  const frozen = tokenCost(PRO, prompt, max);
  const charged = tokenCost(PRO, prompt, output);
  const refunded = points(new Big(frozen).minus(charged));
  expect(await ledgerOf(request_id ?? '')).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', refunded],
  ]);
  expect(callRecord(request_id)?.text?.points).toEqual({ frozen, charged, refunded });
  expect(await balances()).toEqual({ available: points(new Big('1000.000').minus(charged)), frozen: '0.000', charged });
});

it('a streamed chat call is charged for the tokens it streamed', async () => {
  const max = 200;
  const { data: stream, request_id } = await openai.chat.completions
    .create({ ...chat({ max_tokens: max }), stream: true, stream_options: { include_usage: true } })
    .withResponse();
  const { items: chunks, error } = await drain(stream);
  expect(error).toBeUndefined();
  expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
  const usage = chunks.at(-1)?.usage;
  expect(usage?.completion_tokens).toBeLessThan(max);
  const prompt = usage?.prompt_tokens ?? NaN;
  const charged = tokenCost(PRO, prompt, usage?.completion_tokens ?? NaN);
  const frozen = tokenCost(PRO, prompt, max);
  expect(await ledgerOf(request_id ?? '')).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', points(new Big(frozen).minus(charged))],
  ]);
});

it('a responses call without max_output_tokens freezes for the model default maximum', async () => {
  const { data: response, request_id } = await openai.responses.create(responseRequest()).withResponse();
  const prompt = response.usage?.input_tokens ?? NaN;
  const frozen = tokenCost(PRO, prompt, PRO.default_max_tokens);
  const charged = tokenCost(PRO, prompt, response.usage?.output_tokens ?? NaN);
  expect(await ledgerOf(request_id ?? '')).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', points(new Big(frozen).minus(charged))],
  ]);
});

it('a messages call on svc-text-lite is priced at lite prices, rounded to three decimals', async () => {
  const max = 100;
  const { data: msg, response } = await anthropic.messages.create(message({ model: 'svc-text-lite', max_tokens: max })).withResponse();
  expect(msg.model).toBe(LITE.snapshot);
  const requestId = response.headers.get('x-request-id') ?? '';
  const frozen = tokenCost(LITE, msg.usage.input_tokens, max);
  const charged = tokenCost(LITE, msg.usage.input_tokens, msg.usage.output_tokens);
  expect(await ledgerOf(requestId)).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', points(new Big(frozen).minus(charged))],
  ]);
  expect(await balances()).toEqual({ available: points(new Big('1000.000').minus(charged)), frozen: '0.000', charged });
});
