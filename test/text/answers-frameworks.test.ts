import { createOpenAI } from '@ai-sdk/openai';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, Output, stepCountIs, streamText, tool } from 'ai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import type { Emulator } from '../../src/index.ts';
import { startAnswersWorld } from '../support/answers-world.ts';
import type { AnswersWorld } from '../support/answers-world.ts';

// Answers on demand through the Vercel AI SDK and LangChain: a two-step tool loop (the framework runs the tool
// and sends its result back) and a JSON answer parsed by the framework's own structured output, each answered
// by scenarios. Text answers are strict, so no step can pass on a generated answer: a call no scenario answers,
// or whose answer does not fit the tool or the schema the framework sent, is refused with 422.
// @see docs/guides/text-calls.md "Answers on demand" and "Frameworks"

let emulator: Emulator;
let base: string;
let key: string;
let logged: string[];
/** What each /v1 call asked, in order: the framework's requests as the emulator got them. */
let sent: Record<string, unknown>[];
let load: AnswersWorld['load'];

beforeEach(async () => {
  sent = [];
  ({ emulator, base, key, logged, load } = await startAnswersWorld({ textAnswers: 'strict' }));
});
afterEach(() => emulator.close());

/** A fetch that keeps each request body the client sends. */
const noting: typeof fetch = (input, init) => {
  if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as Record<string, unknown>);
  return globalThis.fetch(input, init);
};

/** The weather agent: its question calls get_weather; the tool's result gets the final answer. */
const WEATHER = [
  { name: 'weather-asks', match: { last_user: { contains: 'weather', case_insensitive: true }, assistant_turns: 0 }, text: { tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] } },
  { name: 'weather-answers', match: { tool_result: { name: 'get_weather', content: { contains: 'sunny' } } }, text: { text: 'It is sunny in Paris.' } },
];
const SUMMARY_JSON = { title: 'Q3', points: ['up', 'steady'] };
const summary = z.object({ title: z.string(), points: z.array(z.string()) });
const SUMMARY = { name: 'summary', match: { response_format: { type: 'json_schema', schema_name: 'summary' } }, text: { json: SUMMARY_JSON } };

/** The chat calls' shape the loop must have had: no tool choice forced, the tool result sent back on the second. */
function expectTwoStepLoop(): void {
  expect(sent).toHaveLength(2);
  expect(sent.map((body) => body['tool_choice'] ?? 'auto')).toEqual(['auto', 'auto']);
  const second = sent[1]?.['messages'] as { role: string; content?: unknown }[];
  expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  expect(JSON.stringify(second[2]?.content)).toContain('sunny');
  // Each answer fitted what the framework sent (the tool's parameters): nothing to report.
  expect(logged).toEqual([]);
}

it('runs a two-step tool loop with the Vercel AI SDK: generateText with tools and stopWhen, on openai.chat()', async () => {
  await load(WEATHER);
  const openai = createOpenAI({ baseURL: `${base}/v1`, apiKey: key, fetch: noting });
  const cities: string[] = [];
  const getWeather = tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: ({ city }) => {
      cities.push(city);
      return Promise.resolve({ city, sky: 'sunny', celsius: 24 });
    },
  });
  const result = await generateText({
    model: openai.chat('svc-text-pro'),
    prompt: 'What is the weather like in Paris?',
    tools: { get_weather: getWeather },
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  expect(cities).toEqual(['Paris']);
  expect(result.text).toBe('It is sunny in Paris.');
  expectTwoStepLoop();
});

it('streams the same loop with the Vercel AI SDK: streamText reads the tool call from the deltas, then the answer', async () => {
  await load(WEATHER);
  const openai = createOpenAI({ baseURL: `${base}/v1`, apiKey: key, fetch: noting });
  const getWeather = tool({ inputSchema: z.object({ city: z.string() }), execute: ({ city }) => Promise.resolve({ city, sky: 'sunny' }) });
  const stream = streamText({ model: openai.chat('svc-text-pro'), prompt: 'Weather in Paris?', tools: { get_weather: getWeather }, stopWhen: stepCountIs(3), maxRetries: 0 });
  const deltas: string[] = [];
  for await (const delta of stream.textStream) deltas.push(delta);
  expect(deltas).toEqual(['It', ' is', ' sunny', ' in', ' Paris.']);
  const steps = await stream.steps;
  expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  expect(steps[0]?.toolCalls.map((call) => [call.toolName, call.input])).toEqual([['get_weather', { city: 'Paris' }]]);
  expect(sent.map((body) => body['stream'])).toEqual([true, true]);
  expectTwoStepLoop();
});

it("runs a two-step tool loop with LangChain: ChatOpenAI.bindTools, the tool's ToolMessage sent back", async () => {
  await load(WEATHER);
  const getWeather = langchainTool(({ city }) => JSON.stringify({ city, sky: 'sunny', celsius: 24 }), {
    name: 'get_weather',
    description: 'The weather in a city',
    schema: z.object({ city: z.string() }),
  });
  const model = new ChatOpenAI({ model: 'svc-text-pro', apiKey: key, maxRetries: 0, configuration: { baseURL: `${base}/v1`, fetch: noting } }).bindTools([getWeather]);
  const messages: BaseMessage[] = [new HumanMessage('What is the weather like in Paris?')];
  const call = await model.invoke(messages);
  expect(call).toBeInstanceOf(AIMessage);
  const toolCall = call.tool_calls?.[0];
  if (!toolCall) throw new Error('expected a tool call');
  expect([toolCall.name, toolCall.args]).toEqual(['get_weather', { city: 'Paris' }]);
  const result = (await getWeather.invoke(toolCall)) as ToolMessage;
  expect(result).toBeInstanceOf(ToolMessage);
  messages.push(call, result);
  const answer = await model.invoke(messages);
  expect(answer.tool_calls).toEqual([]);
  expect(answer.text).toBe('It is sunny in Paris.');
  expectTwoStepLoop();
});

it('parses a JSON answer with the Vercel AI SDK: Output.object sends response_format json_schema on openai.chat()', async () => {
  await load([SUMMARY]);
  const openai = createOpenAI({ baseURL: `${base}/v1`, apiKey: key, fetch: noting });
  const result = await generateText({ model: openai.chat('svc-text-lite'), output: Output.object({ schema: summary, name: 'summary' }), prompt: 'Summarize the quarter.', maxRetries: 0 });
  expect(result.output).toEqual(SUMMARY_JSON);
  expect(sent[0]).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'summary' } } });
  expect(logged).toEqual([]);
});

it('parses a JSON answer with LangChain: withStructuredOutput, method jsonSchema, sends response_format json_schema', async () => {
  await load([SUMMARY]);
  const model = new ChatOpenAI({ model: 'svc-text-lite', apiKey: key, maxRetries: 0, configuration: { baseURL: `${base}/v1`, fetch: noting } });
  const result = await model.withStructuredOutput(summary, { method: 'jsonSchema', name: 'summary' }).invoke('Summarize the quarter.');
  expect(result).toEqual(SUMMARY_JSON);
  expect(sent[0]).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'summary' } } });
  expect(logged).toEqual([]);
});

it('refuses, in strict mode, a framework call no scenario answers: the loop cannot pass on generated text', async () => {
  // Only the first step is scripted: the tool result comes back to no rule.
  await load(WEATHER.slice(0, 1));
  const openai = createOpenAI({ baseURL: `${base}/v1`, apiKey: key, fetch: noting });
  const getWeather = tool({ inputSchema: z.object({ city: z.string() }), execute: () => Promise.resolve({ sky: 'sunny' }) });
  await expect(
    generateText({ model: openai.chat('svc-text-pro'), prompt: 'Weather in Paris?', tools: { get_weather: getWeather }, stopWhen: stepCountIs(3), maxRetries: 0 }),
  ).rejects.toMatchObject({ statusCode: 422, responseBody: expect.stringContaining('no_matching_answer') });
  expect(sent).toHaveLength(2);
});
