import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Big from 'big.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import { ScenarioFileError } from '../../src/scenarios/index.ts';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { textModel } from '../support/text-models.ts';

// Answers on demand through HTTP, every answer checked against the documents: which call each match rule fits,
// answers in order and `times`, error answers, what is charged, and the rules refused at load with one line.
// @see docs/reference/scenarios.md "Answers on demand"

const CHAT = '/v1/chat/completions';
const RESPONSES = '/v1/responses';
const MESSAGES = '/v1/messages';
const PRO = textModel('svc-text-pro');

let t: TestEmulator;
let api: ApiClient;
let account: { id: string; key: string };
let logged: string[];
beforeEach(async () => {
  logged = [];
  t = await startEmulator({ log: (line) => logged.push(line) });
  account = await newAccount(t, '1000.000');
  api = t.as(account.key);
});
afterEach(() => t.close());

const load = async (...scenarios: object[]): Promise<void> => {
  const res = await t.admin.post('/_emulator/scenarios', { scenarios: scenarios.map((s) => ({ outcome: 'succeeded', ...s })) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
const chat = (content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ model: 'svc-text-pro', messages: [{ role: 'user', content }], ...extra });
const answerOf = (body: { choices: { message: { content: string | null } }[] }): string | null => body.choices[0]?.message.content ?? null;
/** svc-text-pro's price of a call, to the thousandth. */
const tokenPoints = (input: number, output: number): string =>
  new Big(PRO.input_per_million).times(input).plus(new Big(PRO.output_per_million).times(output)).div(1_000_000).round(3, Big.roundHalfUp).toFixed(3);
const balances = async (): Promise<{ available: string; frozen: string }> => (await t.admin.get(`/_emulator/accounts/${account.id}`)).body;

const TOOLS = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  { type: 'function', function: { name: 'get_time' } },
];
const TOOL_LOOP = [
  { role: 'user', content: 'weather?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 24 C' },
];

it.each([
  ['formats', { formats: ['chat'] }, chat('hi'), null],
  ['stream', { stream: false }, chat('hi'), chat('hi', { stream: true })],
  ['last_user contains', { last_user: { contains: 'refund' } }, chat('I want a refund now'), chat('I want a Refund now')],
  ['last_user contains, case-insensitive', { last_user: { contains: 'REFUND', case_insensitive: true } }, chat('a refund'), chat('a return')],
  ['last_user equals', { last_user: { equals: 'ping' } }, chat('ping'), chat('ping!')],
  ['last_user regex', { last_user: { regex: '^order #\\d+$' } }, chat('order #42'), chat('order #x')],
  ['last_user (not an earlier user message)', { last_user: { contains: 'first' } }, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'second' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'first' }] }, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'second' }] }],
  ['system (a system message, text parts joined)', { system: { equals: 'Be brief.' } }, { model: 'svc-text-pro', messages: [{ role: 'system', content: [{ type: 'text', text: 'Be ' }, { type: 'text', text: 'brief.' }] }, { role: 'user', content: 'hi' }] }, chat('Be brief.')],
  ['any_message', { any_message: { contains: 'needle' } }, { model: 'svc-text-pro', messages: [{ role: 'system', content: 'a needle here' }, { role: 'user', content: 'hi' }] }, chat('hay')],
  ['tools', { tools: ['get_time'] }, chat('hi', { tools: TOOLS }), chat('hi', { tools: TOOLS.slice(0, 1) })],
  ['tool_choice required', { tool_choice: 'required' }, chat('hi', { tools: TOOLS, tool_choice: 'required' }), chat('hi', { tools: TOOLS })],
  ['tool_choice auto (the default with tools)', { tool_choice: 'auto' }, chat('hi', { tools: TOOLS }), chat('hi')],
  ['tool_choice by name', { tool_choice: { name: 'get_time' } }, chat('hi', { tools: TOOLS, tool_choice: { type: 'function', function: { name: 'get_time' } } }), chat('hi', { tools: TOOLS, tool_choice: 'required' })],
  ['response_format type', { response_format: { type: 'json_object' } }, chat('hi', { response_format: { type: 'json_object' } }), chat('hi')],
  ['tool_result name and content', { tool_result: { name: 'get_weather', content: { regex: '\\d+ C$' } } }, { model: 'svc-text-pro', messages: TOOL_LOOP }, { model: 'svc-text-pro', messages: TOOL_LOOP.map((m) => (m.role === 'tool' ? { ...m, content: 'Sunny' } : m)) }],
  ['assistant_turns', { assistant_turns: 1 }, { model: 'svc-text-pro', messages: TOOL_LOOP }, chat('hi')],
])('answers by the %s rule the call that fits it, and a call that does not with generated text', async (_name, match, fits, misses) => {
  await load({ name: 'rule', match, text: { text: 'By the rule.' } });
  const fitting = await api.post(CHAT, fits);
  expect(fitting.status).toBe(200);
  expect(answerOf(fitting.body)).toBe('By the rule.');
  if (misses) {
    const res = await api.post(CHAT, misses);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('By the rule.');
  }
});

it('tries the rules in file order, all of one match must hold, and the header comes first', async () => {
  await load(
    { name: 'both', match: { models: ['svc-text-pro'], last_user: { contains: 'a' }, system: { contains: 'b' } }, text: { text: 'both' } },
    { name: 'either', match: { last_user: { contains: 'a' } }, text: { text: 'first fitting' } },
    { name: 'later', match: { last_user: { contains: 'a' } }, text: { text: 'never' } },
  );
  expect(answerOf((await api.post(CHAT, chat('a'))).body)).toBe('first fitting');
  const both = { model: 'svc-text-pro', messages: [{ role: 'system', content: 'b' }, { role: 'user', content: 'a' }] };
  expect(answerOf((await api.post(CHAT, both)).body)).toBe('both');
  expect(answerOf((await api.post(CHAT, { ...both, model: 'svc-text-lite' })).body)).toBe('first fitting');
  expect(answerOf((await api.post(CHAT, chat('a'), { 'X-Emulator-Scenario': 'later' })).body)).toBe('never');
});

it('answers a Responses and a Messages call by their own texts: instructions and system are the system text', async () => {
  await load({ name: 'sys', match: { system: { contains: 'terse' }, last_user: { contains: 'why' } }, text: { text: 'Because.' } });
  const response = await api.post(RESPONSES, { model: 'svc-text-pro', instructions: 'Be terse.', input: 'why?' });
  expect(response.body.output[0].content[0].text).toBe('Because.');
  const message = await api.post(MESSAGES, { model: 'svc-text-pro', max_tokens: 32, system: [{ type: 'text', text: 'Be terse.' }], messages: [{ role: 'user', content: 'why?' }] });
  expect(message.body.content).toEqual([{ type: 'text', text: 'Because.' }]);
});

it('gives N failures then success in order: an error, a fault mid-stream, a 429 with Retry-After, then the answer', async () => {
  await load({
    name: 'flaky',
    match: { last_user: { contains: 'retry me' } },
    text: {
      answers: [
        { error: { code: 'service_unavailable' } },
        { text: 'one two three four five', error_after_chunks: 2 },
        { error: { code: 'rate_limited', retry_after: 7 } },
        { text: 'Done.' },
      ],
    },
  });
  const before = await balances();
  const first = await api.post(CHAT, chat('please retry me'));
  expect([first.status, first.body.error.code]).toEqual([503, 'service_unavailable']);
  const second = await api.post(CHAT, chat('please retry me', { stream: true }));
  expect(second.status).toBe(200);
  expect(second.text.match(/"content":" ?\w+"/g)).toHaveLength(2);
  expect(second.text).toContain('"code":"service_unavailable"');
  const third = await api.post(CHAT, chat('please retry me'));
  expect([third.status, third.body.error.code, third.headers['retry-after']]).toEqual([429, 'rate_limited', '7']);
  // Nothing charged for any of them: refused before the freeze, or the fault refunded.
  expect(await balances()).toEqual(before);
  expect(answerOf((await api.post(CHAT, chat('please retry me'))).body)).toBe('Done.');
  // The last answer answers every call after.
  expect(answerOf((await api.post(CHAT, chat('please retry me'))).body)).toBe('Done.');
});

it('uses a scenario times: N, then the next match applies, listing each use count; a reset starts the counts again and drops the loaded rules', async () => {
  await load(
    { name: 'twice', match: { last_user: { contains: 'x' } }, text: { text: 'special', times: 2 } },
    { name: 'after', match: { last_user: { contains: 'x' } }, text: { answers: [{ text: 'step one', times: 2 }, { text: 'step two', times: 1 }] } },
  );
  const answers: (string | null)[] = [];
  for (let i = 0; i < 6; i++) answers.push(answerOf((await api.post(CHAT, chat('x'))).body));
  expect(answers.slice(0, 5)).toEqual(['special', 'special', 'step one', 'step one', 'step two']);
  // Both used up: generated.
  expect(answers[5]).not.toMatch(/special|step/);
  const listed = (await t.admin.get('/_emulator/scenarios')).body;
  expect(listed.uses).toMatchObject({ twice: 2, after: 3, default: 1 });
  expect((await t.admin.post('/_emulator/reset', {})).status).toBe(200);
  account = await newAccount(t, '1000.000');
  api = t.as(account.key);
  expect(answerOf((await api.post(CHAT, chat('x'))).body)).not.toMatch(/special|step/);
  expect((await t.admin.get('/_emulator/scenarios')).body.uses).toMatchObject({ default: 1 });
  await load({ name: 'twice', match: { last_user: { contains: 'x' } }, text: { text: 'special', times: 2 } });
  expect(answerOf((await api.post(CHAT, chat('x'))).body)).toBe('special');
});

it('does not count a call refused for its points: the next one gets the same answer', async () => {
  await load({ name: 'once', match: { last_user: { contains: 'x' } }, text: { text: 'only once', times: 1 } });
  const poor = await newAccount(t, '0.000');
  expect((await t.as(poor.key).post(CHAT, chat('x'))).status).toBe(402);
  expect(answerOf((await api.post(CHAT, chat('x'))).body)).toBe('only once');
});

it('charges a tool-call answer its usage, a stated output_tokens as stated, and streams several tool calls in order', async () => {
  await load({ name: 'two-tools', match: { tools: ['get_weather', 'get_time'] }, text: { tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, id: 'call_w' }, { name: 'get_time' }], output_tokens: 30 } });
  const res = await api.post(CHAT, chat('hi', { tools: TOOLS, max_tokens: 10 }));
  expect(res.body.choices[0].message.tool_calls).toEqual([
    { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    { id: expect.stringMatching(/^call_\w+_1$/), type: 'function', function: { name: 'get_time', arguments: '{}' } },
  ]);
  expect(res.body.usage.completion_tokens).toBe(30);
  const record = t.emulator.internals.db.calls.get(res.headers['x-request-id'] as string);
  expect(record?.text).toMatchObject({ output_tokens: 30 });
  // 30 output tokens for a maximum of 10: the freeze covered the answer's own, and all of it was charged.
  const cost = tokenPoints(res.body.usage.prompt_tokens as number, 30);
  const ledger = (await t.admin.get(`/_emulator/accounts/${account.id}/ledger`)).body.data as { kind: string; points: string; call_id?: string }[];
  expect(ledger.filter((e) => e.call_id === res.headers['x-request-id']).map((e) => [e.kind, e.points])).toEqual([
    ['freeze', cost],
    ['charge', cost],
  ]);

  const streamed = await api.post(CHAT, chat('hi', { tools: TOOLS, stream: true }));
  const deltas = streamed.text.split('\n\n').filter((e) => e.includes('tool_calls')).map((e) => JSON.parse(e.slice('data: '.length)).choices[0]);
  expect(deltas.map((c: { delta: { tool_calls: { index: number }[] }; finish_reason: string | null }) => [c.delta.tool_calls[0]?.index, c.finish_reason])).toEqual([
    [0, null],
    [0, null],
    [1, null],
    [1, 'tool_calls'],
  ]);
});

it('logs a tool call to a tool the request does not offer, or with arguments that do not fit its parameters', async () => {
  await load({ name: 'wrong', match: { last_user: { contains: 'x' } }, text: { tool_calls: [{ name: 'get_weather', arguments: { town: 'Oslo' } }, { name: 'send_mail' }] } });
  const res = await api.post(CHAT, chat('x', { tools: TOOLS }));
  expect(res.status).toBe(200);
  const id = res.headers['x-request-id'] as string;
  expect(logged).toEqual([
    expect.stringMatching(new RegExp(`^text call ${id}: scenario 'wrong': the tool call to get_weather: its arguments do not fit the tool's parameters: / must have required property 'city'`)),
    `text call ${id}: scenario 'wrong': the tool call to send_mail: not among the offered tools (get_weather, get_time)`,
  ]);
});

it('never sends tool calls in a format that cannot carry them: passed over by match, refused when named by the header', async () => {
  await load({ name: 'tooly', match: { last_user: { contains: 'x' } }, text: { tool_calls: [{ name: 'get_time' }] } });
  const response = await api.post(RESPONSES, { model: 'svc-text-pro', input: 'x' });
  expect(response.status).toBe(200);
  expect(response.body.output[0].content[0].text).not.toBe('');
  const named = await api.post(MESSAGES, { model: 'svc-text-pro', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }, { 'X-Emulator-Scenario': 'tooly' });
  expect(named.status).toBe(422);
  expect(named.body.error.details).toEqual([{ field: 'X-Emulator-Scenario', message: expect.stringContaining('a Messages-style call cannot carry') }]);
});

it.each([
  ['a task rule on a text scenario', { match: { input: { prompt: { contains: 'x' } } }, text: { text: 'y' } }, 'scenarios[0].match.input', 'does not apply to text calls'],
  ['a text-call rule on a task scenario', { match: { last_user: { contains: 'x' } } }, 'scenarios[0].match.last_user', 'applies to text calls only'],
  ['a text-call rule beside a task rule', { match: { metadata: { a: 'b' }, stream: true }, text: {} }, 'scenarios[0].match.metadata', 'no call fits both'],
  ['task models only on a text scenario', { match: { models: ['video-gen-2.0-fast'], stream: true }, text: {} }, 'scenarios[0].match.models', 'names task models only'],
  ['a chat-only rule where the formats are others', { match: { formats: ['messages'], tools: ['a'] }, text: {} }, 'scenarios[0].match.tools', 'only Chat Completions-style calls have it'],
  ['tool calls where the formats cannot carry them', { match: { formats: ['responses'] }, text: { answers: [{ text: 'a' }, { tool_calls: [{ name: 'f' }] }] } }, 'scenarios[0].text.answers[1].tool_calls', 'cannot be carried by a responses answer'],
  ['a regex that is not one', { match: { last_user: { regex: '(unclosed' } }, text: {} }, 'scenarios[0].match.last_user.regex', 'is not a regular expression'],
  ['a regex that backtracks without end', { match: { any_message: { regex: '^(\\w+\\s?)*$' } }, text: {} }, 'scenarios[0].match.any_message.regex', 'repeats a group'],
  ['two conditions in one', { match: { last_user: { contains: 'a', equals: 'a' } }, text: {} }, 'scenarios[0].match.last_user', 'not two'],
  ['a condition with none', { match: { system: { case_insensitive: true } }, text: {} }, 'scenarios[0].match.system.contains', 'is required'],
  ['two answers in one', { text: { text: 'a', json: { a: 1 } } }, 'scenarios[0].text', 'takes one answer'],
  ['an answer beside answers', { match: { stream: true }, text: { text: 'a', answers: [{ text: 'b' }] } }, 'scenarios[0].text.text', 'goes in each answer'],
  ['answers within an answer', { text: { answers: [{ answers: [{ text: 'b' }] }] } }, 'scenarios[0].text.answers[0]', 'no answers of its own'],
  ['times without a match', { text: { text: 'a', times: 2 } }, 'scenarios[0].text.times', 'has no match'],
  ['an unknown error code', { text: { error: { code: 'teapot' } } }, 'scenarios[0].text.error.code', 'must be one of'],
])('refuses %s at load, naming the scenario and the key', async (_name, fields, field, words) => {
  const res = await t.admin.post('/_emulator/scenarios', { scenarios: [{ name: 'bad', outcome: 'succeeded', ...fields }] });
  expect(res.status).toBe(422);
  const detail = (res.body.error.details as { field: string; message: string }[]).find((d) => d.field === field);
  expect(detail?.message, JSON.stringify(res.body.error.details)).toContain(words);
  // The in-process API refuses it the same way.
  expect(() => t.emulator.control.scenarios.load([{ name: 'bad', outcome: 'succeeded', ...fields } as never])).toThrow(expect.objectContaining({ code: 'invalid_params' }));
});

it('refuses a scenario file with a rule that never applies, in one line naming the file, the scenario and the key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-answers-'));
  try {
    const file = join(dir, 'mine.yaml');
    await writeFile(file, ['scenarios:', '  - name: ask', '    outcome: succeeded', '    match: { input: { prompt: { contains: weather } } }', '    text: { text: Sunny. }', ''].join('\n'));
    const error = await createEmulator({ clock: 'manual', log: () => undefined, scenariosDir: dir }).then(
      async (started) => {
        await started.close();
        return null;
      },
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ScenarioFileError);
    expect((error as Error).message).toBe(`${file}: scenarios[0].match.input does not apply to text calls, which have no input, and this scenario has a text block (scenario 'ask')`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
