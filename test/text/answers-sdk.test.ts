import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Emulator } from '../../src/index.ts';
import { startAnswersWorld } from '../support/answers-world.ts';
import type { AnswersWorld } from '../support/answers-world.ts';

// Answers on demand through the official clients: scenarios whose match rules read what a call says answer it
// with the text, JSON or tool calls a test needs, in each format's own shape, streamed or not.
// @see docs/reference/scenarios.md "Answers on demand"

let emulator: Emulator;
let base: string;
let openai: OpenAI;
let anthropic: Anthropic;
let logged: string[];
let load: AnswersWorld['load'];

beforeEach(async () => {
  let key: string;
  ({ emulator, base, key, logged, load } = await startAnswersWorld());
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0 });
});
afterEach(() => emulator.close());

const WEATHER_TOOL: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

/** The weather agent's two steps: the question calls get_weather, its result gets the final answer. */
const WEATHER = [
  { name: 'weather-asks', match: { last_user: { contains: 'weather', case_insensitive: true }, assistant_turns: 0 }, text: { tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] } },
  { name: 'weather-answers', match: { tool_result: { name: 'get_weather', content: { contains: 'sunny' } } }, text: { text: 'It is sunny in Paris.' } },
];

it('runs a two-step tool loop with the openai client: a tool call, the tool result sent back, the final answer', async () => {
  await load(WEATHER);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the Weather like in Paris?' }];
  const first = await openai.chat.completions.create({ model: 'svc-text-pro', messages, tools: [WEATHER_TOOL] });
  const choice = first.choices[0];
  expect(choice?.finish_reason).toBe('tool_calls');
  expect(choice?.message.content).toBeNull();
  const call = choice?.message.tool_calls?.[0];
  if (call?.type !== 'function') throw new Error('expected a function call');
  expect(call.function.name).toBe('get_weather');
  expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });

  messages.push(choice!.message as OpenAI.Chat.ChatCompletionAssistantMessageParam, { role: 'tool', tool_call_id: call.id, content: '{"sky":"sunny","c":24}' });
  const second = await openai.chat.completions.create({ model: 'svc-text-pro', messages, tools: [WEATHER_TOOL] });
  expect(second.choices[0]?.message.content).toBe('It is sunny in Paris.');
  expect(second.choices[0]?.finish_reason).toBe('stop');
  // The answers fitted the tool offered: nothing to report.
  expect(logged).toEqual([]);
});

it('streams the same tool loop: the tool call in the deltas, then the final answer word by word', async () => {
  await load(WEATHER);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris, please' }];
  const stream = openai.chat.completions.stream({ model: 'svc-text-pro', messages, tools: [WEATHER_TOOL], stream_options: { include_usage: true } });
  const final = await stream.finalChatCompletion();
  const call = final.choices[0]?.message.tool_calls?.[0];
  if (call?.type !== 'function') throw new Error('expected a function call');
  expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  expect(final.usage?.completion_tokens).toBe(Math.ceil('{"city":"Paris"}'.length / 4));

  messages.push({ role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
  const deltas: string[] = [];
  for await (const chunk of await openai.chat.completions.create({ model: 'svc-text-pro', messages, tools: [WEATHER_TOOL], stream: true })) {
    if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
  }
  expect(deltas).toEqual(['It', ' is', ' sunny', ' in', ' Paris.']);
});

it('answers a response_format json_schema call with the JSON of the scenario, and logs a JSON that does not fit', async () => {
  const schema = { type: 'object', properties: { title: { type: 'string' }, points: { type: 'array', items: { type: 'string' } } }, required: ['title', 'points'], additionalProperties: false };
  await load([
    { name: 'summary', match: { last_user: { regex: '^summari[sz]e\\b', case_insensitive: true }, response_format: { type: 'json_schema', schema_name: 'summary' } }, text: { json: { title: 'Q3', points: ['up', 'steady'] } } },
    { name: 'bad-summary', match: { response_format: { schema_name: 'summary' } }, text: { json: { title: 3 } } },
  ]);
  const response_format = { type: 'json_schema' as const, json_schema: { name: 'summary', schema, strict: true } };
  const completion = await openai.chat.completions.create({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Summarize the quarter.' }], response_format });
  expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({ title: 'Q3', points: ['up', 'steady'] });
  expect(logged).toEqual([]);

  const other = await openai.chat.completions.create({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Tell me about the quarter.' }], response_format });
  expect(JSON.parse(other.choices[0]?.message.content ?? '')).toEqual({ title: 3 });
  expect(logged).toHaveLength(1);
  expect(logged[0]).toContain(`text call ${other._request_id ?? ''}: scenario 'bad-summary': the json answer does not fit the request's response_format schema 'summary'`);
});

it('answers a Messages call by what it says through @anthropic-ai/sdk, streamed and not', async () => {
  await load([
    { name: 'pirate', match: { formats: ['messages'], system: { contains: 'pirate' }, last_user: { equals: 'Hello' } }, text: { text: 'Ahoy, matey!' } },
  ]);
  const request = { model: 'svc-text-pro', max_tokens: 64, system: 'You are a pirate.', messages: [{ role: 'user' as const, content: 'Hello' }] };
  const message = await anthropic.messages.create(request);
  expect(message.content).toEqual([{ type: 'text', text: 'Ahoy, matey!' }]);
  expect(message.stop_reason).toBe('end_turn');

  const deltas: string[] = [];
  const stream = anthropic.messages.stream(request);
  stream.on('text', (delta) => deltas.push(delta));
  const streamed = await stream.finalMessage();
  expect(deltas).toEqual(['Ahoy,', ' matey!']);
  expect(streamed.usage.output_tokens).toBe(2);

  // Another system text is another call: generated, as before.
  const other = await anthropic.messages.create({ ...request, system: 'You are a banker.' });
  expect(other.content[0]?.type === 'text' && other.content[0].text).not.toBe('Ahoy, matey!');
});

it('answers a Responses call by what it says through the openai client, streamed and not', async () => {
  await load([
    { name: 'capital', match: { formats: ['responses'], any_message: { regex: 'capital of france' , case_insensitive: true } }, text: { text: 'Paris is the capital.' } },
  ]);
  const request = { model: 'svc-text-pro', instructions: 'Answer briefly.', input: [{ role: 'user' as const, content: 'What is the Capital of France?' }] };
  const response = await openai.responses.create(request);
  expect(response.output_text).toBe('Paris is the capital.');
  expect(response.status).toBe('completed');

  const deltas: string[] = [];
  let last: OpenAI.Responses.ResponseStreamEvent | undefined;
  for await (const event of await openai.responses.create({ ...request, stream: true })) {
    if (event.type === 'response.output_text.delta') deltas.push(event.delta);
    last = event;
  }
  expect(deltas.join('')).toBe('Paris is the capital.');
  expect(last?.type).toBe('response.completed');

  // The same words in a chat call: that format is not named.
  const chat = await openai.chat.completions.create({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'What is the Capital of France?' }] });
  expect(chat.choices[0]?.message.content).not.toBe('Paris is the capital.');
});
