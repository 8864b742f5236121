import Big from 'big.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { TEXT_MODELS } from '../support/text-models.ts';
import type { TextModel } from '../../src/models/index.ts';
import { stateOf } from '../support/state.ts';

// Text calls through the harness (every answer checked against openapi/service.yaml): the freeze, the settlement
// and the refunds to the thousandth, the checks that refuse a call before anything is frozen, the error shapes of
// the three endpoints, and the call records.
// @see reference "Text endpoints (synchronous)", "Text billing", "Errors"

const MODELS = TEXT_MODELS;
const model = (id: string): TextModel => {
  const found = MODELS.find((m) => m.id === id);
  if (!found) throw new Error(`no text model ${id} in fixtures/text-models.json`);
  return found;
};
const PRO = model('svc-text-pro');
const LITE = model('svc-text-lite');

/** (input price × input tokens + output price × output tokens) ÷ 1,000,000, to the thousandth, half up; never floats. */
const tokenPoints = (m: TextModel, inputTokens: number, outputTokens: number): string =>
  new Big(m.input_per_million)
    .times(inputTokens)
    .plus(new Big(m.output_per_million).times(outputTokens))
    .div(1_000_000)
    .round(3, Big.roundHalfUp)
    .toFixed(3);
const minus = (a: string, b: string): string => new Big(a).minus(b).toFixed(3);

const PROMPT = 'Explain in a few words how a plan works best.';
const CHAT = '/v1/chat/completions';
const RESPONSES = '/v1/responses';
const MESSAGES = '/v1/messages';
type Path = typeof CHAT | typeof RESPONSES | typeof MESSAGES;
const PATHS: readonly Path[] = [CHAT, RESPONSES, MESSAGES];

/** A request of each format for a model, with extra fields. */
const bodyFor = (path: Path, modelId: string, extra: Record<string, unknown> = {}): Record<string, unknown> => {
  if (path === CHAT) return { model: modelId, messages: [{ role: 'user', content: PROMPT }], ...extra };
  if (path === RESPONSES) return { model: modelId, input: PROMPT, ...extra };
  return { model: modelId, max_tokens: 128, messages: [{ role: 'user', content: PROMPT }], ...extra };
};
const usageOf = (path: Path, body: { usage: Record<string, number> }): { input: number; output: number } =>
  path === CHAT
    ? { input: body.usage['prompt_tokens'] as number, output: body.usage['completion_tokens'] as number }
    : { input: body.usage['input_tokens'] as number, output: body.usage['output_tokens'] as number };
const textOf = (path: Path, body: Record<string, unknown>): string => {
  if (path === CHAT) return (body['choices'] as { message: { content: string } }[])[0]?.message.content as string;
  if (path === RESPONSES) return (body['output'] as { content: { text: string }[] }[])[0]?.content[0]?.text as string;
  return (body['content'] as { text: string }[])[0]?.text as string;
};

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '1000.000');
  api = t.as(account.key);
});
afterEach(() => t.close());

const ledger = async (accountId = account.id): Promise<{ kind: string; points: string; call_id?: string }[]> =>
  (await t.admin.get(`/_emulator/accounts/${accountId}/ledger`)).body.data;
const ledgerOf = async (callId: string): Promise<[string, string][]> =>
  (await ledger()).filter((e) => e.call_id === callId).map((e) => [e.kind, e.points]);
const balances = async (accountId = account.id): Promise<{ available: string; frozen: string; charged: string }> =>
  (await t.admin.get(`/_emulator/accounts/${accountId}`)).body;
const record = (requestId: string) => t.emulator.internals.db.calls.get(requestId);

/** Checks the error body of a text endpoint: the Chat/Responses shape or the Messages shape. */
function expectTextError(path: Path, res: { status: number; headers: Record<string, string>; body: Record<string, unknown> }, status: number, code: string, param: string | null = null): void {
  expect(res.status).toBe(status);
  const requestId = res.headers['x-request-id'];
  expect(requestId).toMatch(/^req_[a-z0-9]{24}$/);
  if (path === MESSAGES) {
    expect(res.body).toEqual({
      type: 'error',
      error: { type: code, message: expect.any(String), code, request_id: requestId, ...(param ? { details: expect.any(Array) } : {}) },
    });
    if (param) expect((res.body['error'] as { details: { field: string }[] }).details[0]?.field).toBe(param);
  } else {
    expect(res.body).toEqual({
      error: { message: expect.any(String), type: code, code, param, request_id: requestId, ...(param ? { details: expect.any(Array) } : {}) },
    });
    if (param) expect((res.body['error'] as { details: { field: string }[] }).details[0]?.field).toBe(param);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Freeze and settlement

it.each([
  ['chat with max_tokens', CHAT, PRO, { max_tokens: 50 }, 50, null],
  ['chat with max_completion_tokens', CHAT, LITE, { max_completion_tokens: 40 }, 40, null],
  ['chat without a maximum (the model default)', CHAT, PRO, {}, PRO.default_max_tokens, null],
  ['a response with max_output_tokens', RESPONSES, LITE, { max_output_tokens: 300 }, 300, null],
  ['a response without a maximum (the model default)', RESPONSES, PRO, {}, PRO.default_max_tokens, null],
  ['a message with max_tokens', MESSAGES, LITE, { max_tokens: 64 }, 64, null],
  ['a 500-token message (text-long)', MESSAGES, PRO, { max_tokens: 2000 }, 2000, 500],
] as const)(
  'freezes input and maximum output for %s, charges the actual usage and refunds the rest, to the thousandth',
  async (_name, path, m, extra, max, longAnswer) => {
    const res = await api.post(path, bodyFor(path, m.id, extra), longAnswer ? { 'X-Emulator-Scenario': 'text-long' } : {});
    expect(res.status).toBe(200);
    const requestId = res.headers['x-request-id'] as string;
    const usage = usageOf(path, res.body);
    expect(usage.output).toBeGreaterThan(0);
    expect(usage.output).toBeLessThanOrEqual(max);
    if (longAnswer) expect(usage.output).toBe(longAnswer);

    const frozen = tokenPoints(m, usage.input, max);
    const charged = tokenPoints(m, usage.input, usage.output);
    const refunded = minus(frozen, charged);
    expect(await ledgerOf(requestId)).toEqual([
      ['freeze', frozen],
      ['charge', charged],
      ['refund', refunded],
    ]);
    expect(await balances()).toMatchObject({ available: minus('1000.000', charged), frozen: '0.000', charged });
    expect(record(requestId)?.text).toEqual({
      stream: false,
      input_tokens: usage.input,
      output_tokens: usage.output,
      points: { frozen, charged, refunded },
      client_closed: false,
    });
  },
);

it('freezes on the same input token count the usage reports, even for a long prompt with a system text', async () => {
  const system = 'You answer in plain words. '.repeat(20);
  const question = 'Which step of the plan should come first, and why? '.repeat(30);
  const res = await api.post(MESSAGES, {
    model: PRO.id,
    max_tokens: 100,
    system,
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: 'Let me think.' },
      { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ],
  });
  expect(res.status).toBe(200);
  const input = res.body.usage.input_tokens as number;
  // Enough tokens that one more or one fewer moves the freeze by 0.002 points.
  expect(input).toBeGreaterThan(300);
  const [freeze] = await ledgerOf(res.headers['x-request-id'] as string);
  expect(freeze).toEqual(['freeze', tokenPoints(PRO, input, 100)]);
  expect(record(res.headers['x-request-id'] as string)?.text?.input_tokens).toBe(input);
});

it('settles a call truncated by the text-truncated scenario on its 16 tokens, frozen on the requested maximum', async () => {
  const res = await api.post(CHAT, bodyFor(CHAT, PRO.id, { max_tokens: 500 }), { 'X-Emulator-Scenario': 'text-truncated' });
  expect(res.body.choices[0].finish_reason).toBe('length');
  const { input, output } = usageOf(CHAT, res.body);
  expect(output).toBe(16);
  const frozen = tokenPoints(PRO, input, 500);
  const charged = tokenPoints(PRO, input, 16);
  expect(await ledgerOf(res.headers['x-request-id'] as string)).toEqual([
    ['freeze', frozen],
    ['charge', charged],
    ['refund', minus(frozen, charged)],
  ]);
});

it.each(PATHS)('refuses input failing review on %s with 422 content_rejected and no ledger entry at all', async (path) => {
  const res = await api.post(path, bodyFor(path, PRO.id), { 'X-Emulator-Scenario': 'text-rejected' });
  expectTextError(path, res, 422, 'content_rejected');
  expect((await ledger()).map((e) => e.kind)).toEqual(['fund']);
  expect(await balances()).toMatchObject({ available: '1000.000', frozen: '0.000', charged: '0.000' });
  expect(record(res.headers['x-request-id'] as string)).toMatchObject({ status: 422, error_code: 'content_rejected' });
  expect(record(res.headers['x-request-id'] as string)?.text).toBeUndefined();
});

it.each([
  [CHAT, 'text-service-unavailable-midstream', 503, 'service_unavailable'],
  [RESPONSES, 'text-content-rejected-midstream', 422, 'content_rejected'],
  [MESSAGES, 'text-invalid-params-midstream', 422, 'invalid_params'],
  [MESSAGES, 'text-service-unavailable-midstream', 503, 'service_unavailable'],
] as const)('refunds the whole freeze of an unstreamed call on %s interrupted by %s', async (path, scenario, status, code) => {
  const res = await api.post(path, bodyFor(path, LITE.id), { 'X-Emulator-Scenario': scenario });
  expectTextError(path, res, status, code);
  const requestId = res.headers['x-request-id'] as string;
  const entries = await ledgerOf(requestId);
  expect(entries.map(([kind]) => kind)).toEqual(['freeze', 'refund']);
  expect(entries[1]?.[1]).toBe(entries[0]?.[1]);
  const max = path === MESSAGES ? 128 : LITE.default_max_tokens;
  const input = record(requestId)?.text?.input_tokens as number;
  expect(entries[0]?.[1]).toBe(tokenPoints(LITE, input, max));
  expect(await balances()).toMatchObject({ available: '1000.000', frozen: '0.000', charged: '0.000' });
  expect(record(requestId)).toMatchObject({ error_code: code, text: { points: { charged: '0.000', refunded: entries[0]?.[1] } } });
});

it('refuses a call the account cannot cover with 402 insufficient_points and freezes nothing', async () => {
  const poor = await newAccount(t, '0.010');
  const res = await t.as(poor.key).post(CHAT, bodyFor(CHAT, PRO.id));
  expectTextError(CHAT, res, 402, 'insufficient_points');
  expect((await ledger(poor.id)).map((e) => [e.kind, e.points])).toEqual([['fund', '0.010']]);
  expect(await balances(poor.id)).toMatchObject({ available: '0.010', frozen: '0.000', charged: '0.000' });
  expect(record(res.headers['x-request-id'] as string)).toMatchObject({ status: 402, error_code: 'insufficient_points' });
});

it('lets a call freeze the exact balance, and refuses it one thousandth short', async () => {
  const probe = await t.api.post(CHAT, bodyFor(CHAT, LITE.id, { max_tokens: 5 }));
  const needed = tokenPoints(LITE, probe.body.usage.prompt_tokens, 5);
  const exact = await newAccount(t, needed);
  const short = await newAccount(t, minus(needed, '0.001'));
  const ok = await t.as(exact.key).post(CHAT, bodyFor(CHAT, LITE.id, { max_tokens: 5 }));
  expect(ok.status).toBe(200);
  expect((await ledger(exact.id)).filter((e) => e.kind === 'freeze').map((e) => e.points)).toEqual([needed]);
  const refused = await t.as(short.key).post(MESSAGES, bodyFor(MESSAGES, LITE.id, { max_tokens: 5 }));
  expectTextError(MESSAGES, refused, 402, 'insufficient_points');
  expect((await ledger(short.id)).map((e) => e.kind)).toEqual(['fund']);
});

it.each([
  [CHAT, PRO.id, 'max_tokens'],
  [CHAT, PRO.id, 'max_completion_tokens'],
  [CHAT, LITE.id, 'max_tokens'],
  [RESPONSES, LITE.id, 'max_output_tokens'],
  [RESPONSES, PRO.id, 'max_output_tokens'],
  [MESSAGES, LITE.id, 'max_tokens'],
  [MESSAGES, PRO.id, 'max_tokens'],
] as const)('refuses %s on %s with %s one above the model limit (422 naming the field), and accepts the limit itself', async (path, modelId, field) => {
  const m = model(modelId);
  const above = await api.post(path, bodyFor(path, m.id, { [field]: m.max_output_tokens + 1 }));
  expectTextError(path, above, 422, 'invalid_params', field);
  expect(await ledgerOf(above.headers['x-request-id'] as string)).toEqual([]);

  const at = await api.post(path, bodyFor(path, m.id, { [field]: m.max_output_tokens }));
  expect(at.status).toBe(200);
  const { input } = usageOf(path, at.body);
  expect((await ledgerOf(at.headers['x-request-id'] as string))[0]).toEqual(['freeze', tokenPoints(m, input, m.max_output_tokens)]);
});

// ---------------------------------------------------------------------------------------------------------------
// Validation and error shapes

it('refuses chat with n other than 1 (422 invalid_params, param n) and accepts n 1', async () => {
  expectTextError(CHAT, await api.post(CHAT, bodyFor(CHAT, PRO.id, { n: 2 })), 422, 'invalid_params', 'n');
  expect((await api.post(CHAT, bodyFor(CHAT, PRO.id, { n: 1 }))).status).toBe(200);
  expect((await ledger()).filter((e) => e.kind === 'freeze')).toHaveLength(1);
});

it.each([
  ['previous_response_id', 'svcresp_abc'],
  ['tools', [{ type: 'function', name: 'f', parameters: { type: 'object' } }]],
  ['tools', []],
])('refuses a response with %s (422 invalid_params naming it)', async (field, value) => {
  const res = await api.post(RESPONSES, bodyFor(RESPONSES, PRO.id, { [field]: value }));
  expectTextError(RESPONSES, res, 422, 'invalid_params', field);
  expect((await ledger()).map((e) => e.kind)).toEqual(['fund']);
});

it('refuses a message without max_tokens with 422 invalid_params', async () => {
  const res = await api.post(MESSAGES, { model: PRO.id, messages: [{ role: 'user', content: PROMPT }] });
  expectTextError(MESSAGES, res, 422, 'invalid_params', 'max_tokens');
});

it('refuses a message with tools with 422 invalid_params', async () => {
  const res = await api.post(MESSAGES, bodyFor(MESSAGES, PRO.id, { tools: [{ name: 'f', input_schema: { type: 'object' } }] }));
  expectTextError(MESSAGES, res, 422, 'invalid_params', 'tools');
  expect((await ledger()).map((e) => e.kind)).toEqual(['fund']);
});

it.each([
  [CHAT, 'svc-text-ultra'],
  [RESPONSES, 'svc-text-ultra'],
  [MESSAGES, 'svc-text-ultra'],
  [CHAT, 'social-notes-data'],
  [RESPONSES, 'social-notes-data'],
  [MESSAGES, 'social-notes-data'],
] as const)('answers %s for model %s with 404 model_unavailable', async (path, modelId) => {
  const res = await api.post(path, bodyFor(path, modelId));
  expectTextError(path, res, 404, 'model_unavailable');
  expect((await ledger()).map((e) => e.kind)).toEqual(['fund']);
});

const NOT_OBJECTS = [
  ['an array', 'application/json', '[{"model":"svc-text-pro"}]'],
  ['a string', 'application/json', '"hello"'],
  ['malformed JSON', 'application/json', '{"model": "svc-text-pro",'],
  ['text/plain', 'text/plain', 'hello'],
] as const;
it.each(PATHS.flatMap((path) => NOT_OBJECTS.map(([name, type, raw]) => [path, name, type, raw] as const)))(
  'answers %s with a body that is %s with 400 bad_request in the endpoint\'s error shape',
  async (path, _name, type, raw) => {
    const res = await api.send((r) => r.post(path).set('Authorization', `Bearer ${account.key}`).set('Content-Type', type).send(raw));
    expectTextError(path, res, 400, 'bad_request');
    expect(record(res.headers['x-request-id'] as string)).toMatchObject({ status: 400, error_code: 'bad_request', account_id: account.id });
  },
);

it('accepts the key as x-api-key on /v1/messages but not on /v1/chat/completions or /v1/responses', async () => {
  const messages = await api.send((r) => r.post(MESSAGES).set('x-api-key', account.key).send(bodyFor(MESSAGES, PRO.id)));
  expect(messages.status).toBe(200);
  expect(record(messages.headers['x-request-id'] as string)).toMatchObject({ account_id: account.id, status: 200 });
  for (const path of [CHAT, RESPONSES] as const) {
    const res = await api.send((r) => r.post(path).set('x-api-key', account.key).send(bodyFor(path, PRO.id)));
    expectTextError(path, res, 401, 'invalid_api_key');
  }
  expect((await ledger()).filter((e) => e.kind === 'freeze')).toHaveLength(1);
});

it('ignores the version headers SDKs attach (anthropic-version, anthropic-beta, x-stainless-*)', async () => {
  const sdkHeaders = {
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'prompt-caching-2024-07-31,not-a-real-beta',
    'anthropic-dangerous-direct-browser-access': 'true',
    'x-stainless-lang': 'js',
    'x-stainless-package-version': '0.99.0',
    'x-stainless-os': 'Linux',
    'x-stainless-arch': 'x64',
    'x-stainless-runtime': 'node',
    'x-stainless-runtime-version': 'v20.19.0',
    'x-stainless-retry-count': '0',
    'x-stainless-timeout': '600',
  };
  for (const path of [MESSAGES, CHAT, RESPONSES] as const) {
    const plain = await api.post(path, bodyFor(path, PRO.id));
    const withHeaders = await api.post(path, bodyFor(path, PRO.id), sdkHeaders);
    expect(withHeaders.status).toBe(200);
    expect(textOf(path, withHeaders.body)).toBe(textOf(path, plain.body));
    expect(withHeaders.body.usage).toEqual(plain.body.usage);
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Call records

it.each(PATHS)('records a call on %s with its tokens and points but not its prompt or output', async (path) => {
  const res = await api.post(path, bodyFor(path, PRO.id));
  const requestId = res.headers['x-request-id'] as string;
  const usage = usageOf(path, res.body);
  const max = path === MESSAGES ? 128 : PRO.default_max_tokens;
  const frozen = tokenPoints(PRO, usage.input, max);
  const charged = tokenPoints(PRO, usage.input, usage.output);
  expect(record(requestId)).toMatchObject({
    request_id: requestId,
    at: '2026-11-23T09:00:00+08:00',
    account_id: account.id,
    method: 'POST',
    path,
    status: 200,
    error_code: null,
    // The model code the request named (the response itself names the snapshot).
    model: PRO.id,
  });
  expect(res.body.model).toBe(PRO.snapshot);
  expect(record(requestId)?.text).toEqual({
    stream: false,
    input_tokens: usage.input,
    output_tokens: usage.output,
    points: { frozen, charged, refunded: minus(frozen, charged) },
    client_closed: false,
  });
  expect(JSON.stringify(stateOf(t.emulator))).not.toContain(PROMPT);
  expect(JSON.stringify(stateOf(t.emulator))).not.toContain(textOf(path, res.body));
});

it('keeps prompts and outputs in the call records only when created with recordContent', async () => {
  const recording = await startEmulator({ recordContent: true });
  try {
    const client = recording.api;
    const system = 'You answer in plain words.';
    const chat = await client.post(CHAT, { model: LITE.id, messages: [{ role: 'system', content: system }, { role: 'user', content: PROMPT }] });
    const response = await client.post(RESPONSES, { model: LITE.id, instructions: system, input: PROMPT });
    const message = await client.post(MESSAGES, { model: LITE.id, max_tokens: 64, system, messages: [{ role: 'user', content: PROMPT }] });
    for (const [path, res] of [[CHAT, chat], [RESPONSES, response], [MESSAGES, message]] as const) {
      expect(res.status).toBe(200);
      const text = recording.emulator.internals.db.calls.get(res.headers['x-request-id'] as string)?.text;
      expect(text?.content).toEqual({ prompt: [system, PROMPT], output: textOf(path, res.body) });
      expect(text?.input_tokens).toBe(usageOf(path, res.body).input);
    }
  } finally {
    await recording.close();
  }
});
