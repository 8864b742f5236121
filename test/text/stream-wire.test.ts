import Big from 'big.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { TEXT_MODELS } from '../support/text-models.ts';
import type { TextModel } from '../../src/models/index.ts';

// Text streams on the wire, read with fetch from a listening emulator so the bytes are what a client sees: the
// headers, the event order of each format, mid-stream errors and a client that goes away.
// @see reference "Streaming", "Text billing", "Errors" and "States and transitions" (disconnects)

const MODELS = TEXT_MODELS;
const PRO = MODELS.find((m) => m.id === 'svc-text-pro') as TextModel;

/** (input price × input tokens + output price × output tokens) ÷ 1,000,000, to the thousandth, half up. */
const tokenPoints = (inputTokens: number, outputTokens: number, model = PRO): string =>
  new Big(model.input_per_million)
    .times(inputTokens)
    .plus(new Big(model.output_per_million).times(outputTokens))
    .div(1_000_000)
    .round(3, Big.roundHalfUp)
    .toFixed(3);

const ADMIN = 'x';
const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const PROMPT = 'Explain in a few words how a plan works best.';

let emulator: Emulator;
let base: string;
let account: { id: string; key: string };
beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  base = await emulator.listen(0);
  const created = (await (await admin('POST', '/_emulator/accounts', { points: '1000.000' })).json()) as { id: string };
  const key = (await (await admin('POST', `/_emulator/accounts/${created.id}/keys`, {})).json()) as { key: string };
  account = { id: created.id, key: key.key };
});
afterEach(() => emulator.close());

function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function post(path: string, body: unknown, options: { scenario?: string; signal?: AbortSignal } = {}): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${account.key}`,
      'Content-Type': 'application/json',
      ...(options.scenario ? { 'X-Emulator-Scenario': options.scenario } : {}),
    },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A server-sent events parser following the WHATWG rules (no parser package is installed, and the SDKs' own are
// internal): lines end with CRLF, LF or CR; `field: value` with one optional space after the colon; `data` lines
// are joined with \n; a blank line dispatches the event (none when no data came); lines starting with `:` are
// comments; an event not ended by a blank line when the stream ends is discarded.

interface SseMessage {
  /** The `event:` field, undefined when the event had none (the default type `message`). */
  event: string | undefined;
  data: string;
}

function sseParser(onEvent: (message: SseMessage) => void): { feed(text: string): void } {
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  const line = (text: string): void => {
    if (text === '') {
      if (data.length > 0) onEvent({ event, data: data.join('\n') });
      event = undefined;
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  return {
    feed(text) {
      buffer += text;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        if (!match) return;
        // A CR at the very end may be the first half of a CRLF: wait for the next piece.
        if (match[0] === '\r' && match.index === buffer.length - 1) return;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    },
  };
}

interface Stream {
  requestId: string;
  raw: string;
  messages: SseMessage[];
}

function expectStreamHeaders(res: Response): string {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream(;|$)/);
  expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
  expect(res.headers.get('x-accel-buffering')).toBe('no');
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toMatch(REQUEST_ID);
  return requestId as string;
}

/** Posts a streamed call, checks the stream headers and reads the whole stream. */
async function openStream(path: string, body: Record<string, unknown>, scenario?: string): Promise<Stream> {
  const res = await post(path, body, scenario ? { scenario } : {});
  const requestId = expectStreamHeaders(res);
  const messages: SseMessage[] = [];
  const parser = sseParser((m) => messages.push(m));
  const raw = await res.text();
  parser.feed(raw);
  return { requestId, raw, messages };
}

const json = (m: SseMessage): Record<string, unknown> => JSON.parse(m.data) as Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------------
// The three formats.

type FormatName = 'chat' | 'responses' | 'messages';
const FORMATS: Record<FormatName, { path: string; body(extra?: Record<string, unknown>): Record<string, unknown>; max: number }> = {
  chat: {
    path: '/v1/chat/completions',
    body: (extra = {}) => ({ model: 'svc-text-pro', messages: [{ role: 'user', content: PROMPT }], ...extra }),
    max: PRO.default_max_tokens,
  },
  responses: {
    path: '/v1/responses',
    body: (extra = {}) => ({ model: 'svc-text-pro', input: PROMPT, ...extra }),
    max: PRO.default_max_tokens,
  },
  messages: {
    path: '/v1/messages',
    body: (extra = {}) => ({ model: 'svc-text-pro', max_tokens: 256, messages: [{ role: 'user', content: PROMPT }], ...extra }),
    max: 256,
  },
};

/** The same request answered without streaming: what the stream must agree with. */
async function unstreamed(format: FormatName, extra: Record<string, unknown> = {}): Promise<{ body: Record<string, unknown>; inputTokens: number; outputTokens: number; text: string }> {
  const res = await post(FORMATS[format].path, FORMATS[format].body(extra));
  expect(res.status).toBe(200);
  const body = (await res.json()) as Record<string, unknown> & {
    usage: Record<string, number>;
    choices?: { message: { content: string } }[];
    output?: { content: { text: string }[] }[];
    content?: { text: string }[];
  };
  const text =
    format === 'chat' ? body.choices?.[0]?.message.content : format === 'responses' ? body.output?.[0]?.content[0]?.text : body.content?.[0]?.text;
  return {
    body,
    inputTokens: (format === 'chat' ? body.usage['prompt_tokens'] : body.usage['input_tokens']) as number,
    outputTokens: (format === 'chat' ? body.usage['completion_tokens'] : body.usage['output_tokens']) as number,
    text: text as string,
  };
}

const ledgerOf = async (callId: string): Promise<[string, string][]> =>
  ((await (await admin('GET', `/_emulator/accounts/${account.id}/ledger`)).json()) as { data: { kind: string; points: string; call_id?: string }[] }).data
    .filter((e) => e.call_id === callId)
    .map((e) => [e.kind, e.points]);
const balances = async (): Promise<{ available: string; frozen: string; charged: string }> =>
  (await (await admin('GET', `/_emulator/accounts/${account.id}`)).json()) as { available: string; frozen: string; charged: string };
const callRecord = (requestId: string) => emulator.internals.db.calls.get(requestId);

// ---------------------------------------------------------------------------------------------------------------
// Headers

it.each(['chat', 'responses', 'messages'] as const)(
  'sends a %s stream as text/event-stream with Cache-Control no-cache, no-transform, X-Accel-Buffering no and an X-Request-Id',
  async (format) => {
    const res = await post(FORMATS[format].path, FORMATS[format].body({ stream: true }));
    const requestId = expectStreamHeaders(res);
    await res.text();
    expect(callRecord(requestId)).toMatchObject({ request_id: requestId, status: 200, path: FORMATS[format].path, text: { stream: true } });
  },
);

// ---------------------------------------------------------------------------------------------------------------
// Chat Completions-style

type ChatChunk = {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string | null }; finish_reason: string | null }[];
  usage?: Record<string, number>;
};

/** Splits a chat stream into its chunks, checking that it ends with exactly one `data: [DONE]` and no event names. */
function chatChunks(stream: Stream): ChatChunk[] {
  expect(stream.messages.every((m) => m.event === undefined)).toBe(true);
  expect(stream.messages.at(-1)?.data).toBe('[DONE]');
  expect(stream.messages.filter((m) => m.data === '[DONE]')).toHaveLength(1);
  expect(stream.raw.endsWith('data: [DONE]\n\n')).toBe(true);
  return stream.messages.slice(0, -1).map((m) => json(m) as unknown as ChatChunk);
}

it('streams chat as a role chunk, one content chunk per token with finish_reason stop only on the last, a usage chunk equal to the unstreamed usage, then [DONE]', async () => {
  const plain = await unstreamed('chat');
  const stream = await openStream('/v1/chat/completions', FORMATS.chat.body({ stream: true, stream_options: { include_usage: true } }));
  const chunks = chatChunks(stream);

  const [first, ...rest] = chunks;
  expect(first?.choices).toEqual([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
  const content = rest.slice(0, -1);
  const usageChunk = rest.at(-1);
  expect(content).toHaveLength(plain.outputTokens);
  content.forEach((chunk, i) => {
    expect(chunk.choices).toHaveLength(1);
    expect(chunk.choices[0]?.delta.role).toBeUndefined();
    expect(typeof chunk.choices[0]?.delta.content).toBe('string');
    expect(chunk.choices[0]?.finish_reason).toBe(i === content.length - 1 ? 'stop' : null);
    expect(chunk.usage).toBeUndefined();
  });
  expect(content.map((c) => c.choices[0]?.delta.content).join('')).toBe(plain.text);
  expect(usageChunk?.choices).toEqual([]);
  expect(usageChunk?.usage).toEqual(plain.body['usage']);
  expect(usageChunk?.usage).toEqual({
    prompt_tokens: plain.inputTokens,
    completion_tokens: plain.outputTokens,
    total_tokens: plain.inputTokens + plain.outputTokens,
  });

  // One call: one id, one object type, one creation time and model on every chunk.
  expect(first?.id).toMatch(/^svcchat_[A-Za-z0-9]+$/);
  for (const chunk of chunks) {
    expect(chunk).toMatchObject({ id: first?.id, object: 'chat.completion.chunk', created: first?.created, model: PRO.snapshot });
  }

  // A finished stream is settled on what it delivered.
  const frozen = tokenPoints(plain.inputTokens, FORMATS.chat.max);
  const charged = tokenPoints(plain.inputTokens, plain.outputTokens);
  const refunded = new Big(frozen).minus(charged).toFixed(3);
  expect(await ledgerOf(stream.requestId)).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', refunded],
  ]);
  expect(callRecord(stream.requestId)?.text).toEqual({
    stream: true,
    input_tokens: plain.inputTokens,
    output_tokens: plain.outputTokens,
    points: { frozen, charged, refunded },
    client_closed: false,
  });
});

it('sends no usage chunk in a chat stream without stream_options.include_usage', async () => {
  const plain = await unstreamed('chat');
  for (const extra of [{}, { stream_options: { include_usage: false } }]) {
    const chunks = chatChunks(await openStream('/v1/chat/completions', FORMATS.chat.body({ stream: true, ...extra })));
    expect(chunks).toHaveLength(1 + plain.outputTokens);
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  }
});

it.each([
  ['max_tokens 7', { max_tokens: 7 }, undefined, 7],
  ['the text-truncated scenario', {}, 'text-truncated', 16],
])('ends a chat stream cut by %s with finish_reason length on its last content chunk', async (_name, extra, scenario, tokens) => {
  const stream = await openStream('/v1/chat/completions', FORMATS.chat.body({ stream: true, stream_options: { include_usage: true }, ...extra }), scenario);
  const chunks = chatChunks(stream);
  const content = chunks.slice(1, -1);
  expect(content).toHaveLength(tokens);
  expect(content.map((c) => c.choices[0]?.finish_reason)).toEqual([...Array<null>(tokens - 1).fill(null), 'length']);
  expect(chunks.at(-1)?.usage?.['completion_tokens']).toBe(tokens);
  expect(callRecord(stream.requestId)?.text?.output_tokens).toBe(tokens);
});

// ---------------------------------------------------------------------------------------------------------------
// Responses-style

const RESPONSES_ORDER = (deltas: number, end: 'response.completed' | 'response.incomplete'): string[] => [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  ...Array<string>(deltas).fill('response.output_text.delta'),
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  end,
];

type Payload = Record<string, unknown> & { type: string; sequence_number?: number };

/** The events of a named-event stream, checking that every `event:` name equals the payload's `type`. */
function namedEvents(stream: Stream): Payload[] {
  return stream.messages.map((m) => {
    const payload = json(m) as Payload;
    expect(m.event).toBeDefined();
    expect(payload.type).toBe(m.event);
    return payload;
  });
}

it('streams a response as created, in_progress, item and part added, text deltas, the dones and completed, numbered 0 to n-1', async () => {
  const plain = await unstreamed('responses');
  const stream = await openStream('/v1/responses', FORMATS.responses.body({ stream: true }));
  const events = namedEvents(stream);
  expect(events.map((e) => e.type)).toEqual(RESPONSES_ORDER(plain.outputTokens, 'response.completed'));
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));

  const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e['delta'] as string);
  const done = events.find((e) => e.type === 'response.output_text.done') as Payload;
  expect(deltas.join('')).toBe(done['text']);
  expect(done['text']).toBe(plain.text);
  expect((events.find((e) => e.type === 'response.content_part.done') as Payload)['part']).toMatchObject({ type: 'output_text', text: plain.text });

  const created = events[0]?.['response'] as Record<string, unknown>;
  const final = events.at(-1)?.['response'] as Record<string, unknown>;
  expect(created).toMatchObject({ status: 'in_progress', store: false });
  expect(created['id']).toMatch(/^svcresp_[A-Za-z0-9]+$/);
  expect(final).toMatchObject({
    id: created['id'],
    object: 'response',
    status: 'completed',
    store: false,
    model: PRO.snapshot,
    incomplete_details: null,
    output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: plain.text }] }],
  });
  expect(final['usage']).toEqual(plain.body['usage']);
  expect(final['usage']).toMatchObject({ input_tokens: plain.inputTokens, output_tokens: deltas.length, total_tokens: plain.inputTokens + deltas.length });
  // Every item event names the same output item.
  const itemId = (events[2]?.['item'] as { id: string }).id;
  for (const e of events.slice(3, -2)) expect(e['item_id']).toBe(itemId);
});

it.each([
  ['max_output_tokens 9', { max_output_tokens: 9 }, undefined, 9],
  ['the text-truncated scenario', {}, 'text-truncated', 16],
])('ends a response stream cut by %s with response.incomplete', async (_name, extra, scenario, tokens) => {
  const stream = await openStream('/v1/responses', FORMATS.responses.body({ stream: true, ...extra }), scenario);
  const events = namedEvents(stream);
  expect(events.map((e) => e.type)).toEqual(RESPONSES_ORDER(tokens, 'response.incomplete'));
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
  expect(events.at(-1)?.['response']).toMatchObject({
    status: 'incomplete',
    incomplete_details: { reason: 'max_output_tokens' },
    store: false,
    usage: { output_tokens: tokens },
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Messages-style

const MESSAGES_ORDER = (deltas: number): string[] => [
  'message_start',
  'content_block_start',
  'ping',
  ...Array<string>(deltas).fill('content_block_delta'),
  'content_block_stop',
  'message_delta',
  'message_stop',
];

it('streams a message as message_start, content_block_start, ping, deltas, content_block_stop, message_delta end_turn and message_stop', async () => {
  const plain = await unstreamed('messages');
  const stream = await openStream('/v1/messages', FORMATS.messages.body({ stream: true }));
  const events = namedEvents(stream);
  expect(events.map((e) => e.type)).toEqual(MESSAGES_ORDER(plain.outputTokens));

  const message = events[0]?.['message'] as Record<string, unknown>;
  expect(message['id']).toMatch(/^svcmsg_[A-Za-z0-9]+$/);
  expect(message).toMatchObject({ type: 'message', role: 'assistant', model: PRO.snapshot, content: [], stop_reason: null });
  expect(message['usage']).toMatchObject({ input_tokens: plain.inputTokens });

  const deltas = events.filter((e) => e.type === 'content_block_delta').map((e) => (e['delta'] as { type: string; text: string }));
  expect(deltas.every((d) => d.type === 'text_delta')).toBe(true);
  expect(deltas.map((d) => d.text).join('')).toBe(plain.text);
  expect(events.find((e) => e.type === 'message_delta')).toMatchObject({
    delta: { stop_reason: 'end_turn' },
    usage: { output_tokens: plain.outputTokens },
  });
});

it.each([
  ['max_tokens 6', { max_tokens: 6 }, undefined, 6],
  ['the text-truncated scenario', {}, 'text-truncated', 16],
])('ends a message stream cut by %s with stop_reason max_tokens', async (_name, extra, scenario, tokens) => {
  const events = namedEvents(await openStream('/v1/messages', FORMATS.messages.body({ stream: true, ...extra }), scenario));
  expect(events.map((e) => e.type)).toEqual(MESSAGES_ORDER(tokens));
  expect(events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: tokens } });
});

// ---------------------------------------------------------------------------------------------------------------
// Errors in mid-stream

const MIDSTREAM = [
  ['service_unavailable', 'text-service-unavailable-midstream'],
  ['content_rejected', 'text-content-rejected-midstream'],
  ['invalid_params', 'text-invalid-params-midstream'],
] as const;
const MIDSTREAM_CASES = (['chat', 'responses', 'messages'] as const).flatMap((format) =>
  MIDSTREAM.map(([code, scenario]) => [format, code, scenario] as const),
);

it.each(MIDSTREAM_CASES)(
  'interrupts a %s stream after exactly 5 content chunks with a %s error event in the format\'s error shape, and refunds the whole freeze',
  async (format, code, scenario) => {
    const { inputTokens } = await unstreamed(format);
    const before = await balances();
    const stream = await openStream(FORMATS[format].path, FORMATS[format].body({ stream: true }), scenario);
    const { requestId } = stream;

    if (format === 'chat') {
      const chunks = chatChunks(stream);
      // role chunk, 5 content chunks (none finished), the error, then [DONE].
      expect(chunks).toHaveLength(7);
      expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
      for (const chunk of chunks.slice(1, 6)) {
        expect(chunk.object).toBe('chat.completion.chunk');
        expect(typeof chunk.choices[0]?.delta.content).toBe('string');
        expect(chunk.choices[0]?.finish_reason).toBeNull();
      }
      expect(chunks[6]).toEqual({ error: { message: expect.any(String), type: code, code, param: null, request_id: requestId } });
    } else if (format === 'responses') {
      const events = namedEvents(stream);
      expect(events.map((e) => e.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array<string>(5).fill('response.output_text.delta'),
        'error',
      ]);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
      expect(events.at(-1)).toEqual({
        type: 'error',
        sequence_number: 9,
        error: { message: expect.any(String), type: code, code, param: null, request_id: requestId },
      });
    } else {
      const events = namedEvents(stream);
      expect(events.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'ping', ...Array<string>(5).fill('content_block_delta'), 'error']);
      expect(events.at(-1)).toEqual({ type: 'error', error: { type: code, message: expect.any(String), code, request_id: requestId } });
    }
    // Nothing after the error (and, in the Chat Completions-style, its [DONE]): the stream ends on a whole event.
    expect(stream.raw.endsWith('\n\n')).toBe(true);

    const frozen = tokenPoints(inputTokens, FORMATS[format].max);
    expect(await ledgerOf(requestId)).toEqual([
      ['freeze', frozen],
      ['refund', frozen],
    ]);
    // Full refund: the account is as it was before the call.
    expect(await balances()).toEqual(before);
    expect(before.frozen).toBe('0.000');
    expect(callRecord(requestId)).toMatchObject({
      status: 200,
      error_code: code,
      text: { stream: true, input_tokens: inputTokens, points: { frozen, charged: '0.000', refunded: frozen }, client_closed: false },
    });
  },
);

// ---------------------------------------------------------------------------------------------------------------
// Client disconnect

it('settles a chat stream the client aborts on the tokens written so far and marks the call client_closed', async () => {
  const loaded = await admin('POST', '/_emulator/scenarios', {
    scenarios: [{ name: 'drip', outcome: 'succeeded', text: { output_tokens: 200, chunk_interval_ms: 5 } }],
  });
  expect(loaded.status).toBe(201);
  const body = FORMATS.chat.body({ max_tokens: 300 });
  const { inputTokens } = await unstreamed('chat', { max_tokens: 300 });
  const before = await balances();

  const K = 10;
  const controller = new AbortController();
  const res = await post('/v1/chat/completions', { ...body, stream: true }, { scenario: 'drip', signal: controller.signal });
  const requestId = expectStreamHeaders(res);
  let received = 0;
  const parser = sseParser((m) => {
    if (m.data === '[DONE]') return;
    const delta = (json(m) as unknown as ChatChunk).choices[0]?.delta;
    if (delta && delta.role === undefined && typeof delta.content === 'string') received += 1;
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  while (received < K) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  expect(received).toBeGreaterThanOrEqual(K);
  controller.abort();
  await reader.cancel().catch(() => undefined);

  // The only test that waits for real I/O: the server notices the closed connection at its next chunk.
  const deadline = Date.now() + 5000;
  while (callRecord(requestId)?.text?.client_closed !== true) {
    if (Date.now() > deadline) throw new Error(`the call record never showed client_closed: ${JSON.stringify(callRecord(requestId))}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const text = callRecord(requestId)?.text;
  const outputTokens = text?.output_tokens as number;
  expect(outputTokens).toBeGreaterThanOrEqual(received);
  expect(outputTokens).toBeLessThan(200);

  const frozen = tokenPoints(inputTokens, 300);
  const charged = tokenPoints(inputTokens, outputTokens);
  const refunded = new Big(frozen).minus(charged).toFixed(3);
  expect(text).toEqual({
    stream: true,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    points: { frozen, charged, refunded },
    client_closed: true,
  });
  expect(callRecord(requestId)).toMatchObject({ status: 200, error_code: null });
  expect(await ledgerOf(requestId)).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', refunded],
  ]);
  expect(await balances()).toEqual({
    ...before,
    available: new Big(before.available).minus(charged).toFixed(3),
    frozen: '0.000',
    charged: new Big(before.charged).plus(charged).toFixed(3),
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Content of interrupted streams

it('records, with recordContent, only the output a stream interrupted mid-way actually sent', async () => {
  const recording = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined, recordContent: true });
  try {
    const url = await recording.listen(0);
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-emulator-demo', 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'text-service-unavailable-midstream' },
      body: JSON.stringify(FORMATS.messages.body({ stream: true })),
    });
    const requestId = expectStreamHeaders(res);
    const messages: SseMessage[] = [];
    sseParser((m) => messages.push(m)).feed(await res.text());
    const sent = messages
      .filter((m) => m.event === 'content_block_delta')
      .map((m) => (json(m)['delta'] as { text: string }).text)
      .join('');
    const text = recording.internals.db.calls.get(requestId)?.text;
    expect(text?.content?.prompt).toEqual([PROMPT]);
    // The record's output must be the 5 tokens its output_tokens counts, not the whole answer that was never sent.
    expect(text?.output_tokens).toBe(5);
    expect(text?.content?.output).toBe(sent);
  } finally {
    await recording.close();
  }
});
