import { ChatAnthropic } from '@langchain/anthropic';
import type { AIMessageChunk, UsageMetadata } from '@langchain/core/messages';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { OutputParserException } from '@langchain/core/output_parsers';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { createEmulator } from 'svc-emulator';
import type { Emulator } from 'svc-emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';

// LangChain (@langchain/openai 1.5, @langchain/anthropic 1.5, @langchain/core 1) pointed at the emulator.
//
//   new ChatOpenAI({ configuration: { baseURL: `${base}/v1` } })  Chat Completions (Responses with useResponsesApi)
//   new ChatAnthropic({ anthropicApiUrl: base })                  Messages, through @anthropic-ai/sdk: no /v1
//
// Text and streams work on all three endpoints. Structured output and tools work on ChatOpenAI's default (Chat
// Completions) only: the reference gives the Responses-style endpoint neither `text.format` nor `tools`, and the
// Messages-style one no `tools` (which is how ChatAnthropic asks for an object by default).
//
// maxRetries: 0 throughout. LangChain retries every status but 400-407, 409 and 413, six times with growing
// pauses: the reference's 422 invalid_params would take a minute or more to surface. useResponsesApi's failed JSON
// parse is retried too, each time a paid call.

let emulator: Emulator;
let base: string;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', log: () => undefined });
  base = await emulator.listen(0);
});
afterAll(() => emulator.close());

const KEY = 'sk-emulator-demo';
const chatOpenAI = (fields: { useResponsesApi?: boolean } = {}) =>
  new ChatOpenAI({ model: 'svc-text-lite', apiKey: KEY, maxRetries: 0, ...fields, configuration: { baseURL: `${base}/v1` } });
// ChatAnthropic sends max_tokens 4096 unless told: the maximum is what the call freezes.
const chatAnthropic = (fields: { maxRetries?: number; anthropicApiUrl?: string; fetch?: typeof fetch; headers?: Record<string, string> } = {}) =>
  new ChatAnthropic({
    model: 'svc-text-lite',
    apiKey: KEY,
    maxTokens: 256,
    maxRetries: fields.maxRetries ?? 0,
    anthropicApiUrl: fields.anthropicApiUrl ?? base,
    clientOptions: { ...(fields.fetch ? { fetch: fields.fetch } : {}), ...(fields.headers ? { defaultHeaders: fields.headers } : {}) },
  });

const post = z.object({ title: z.string(), tags: z.array(z.string()) });
const weather = tool(({ city }) => JSON.stringify({ city, celsius: 21 }), {
  name: 'weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

const endpoints: { endpoint: string; model: () => ChatOpenAI | ChatAnthropic; id: RegExp }[] = [
  { endpoint: 'chat completions, ChatOpenAI', model: () => chatOpenAI(), id: /^svcchat_/ },
  { endpoint: 'responses, ChatOpenAI with useResponsesApi', model: () => chatOpenAI({ useResponsesApi: true }), id: /^svcresp_/ },
  { endpoint: 'messages, ChatAnthropic', model: () => chatAnthropic(), id: /^svcmsg_/ },
];

it.each(endpoints)('answers invoke on $endpoint', async ({ model, id }) => {
  const message = await model().invoke('Say hello');
  expect(message.id).toMatch(id);
  expect(message.text.length).toBeGreaterThan(0);
  const usage = usageOf(message);
  expect(usage?.output_tokens).toBeGreaterThan(0);
  expect(usage?.total_tokens).toBe((usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0));
});

it.each(endpoints)('streams on $endpoint: the chunks join to the text invoke gets, with the same usage', async ({ model }) => {
  // The emulator's answer depends only on the request, so the same prompt streamed or not gives the same text.
  const whole = await model().invoke('Tell me about the plan');
  let joined: AIMessageChunk | undefined;
  let chunks = 0;
  for await (const chunk of await model().stream('Tell me about the plan')) {
    joined = joined ? joined.concat(chunk) : chunk;
    if (chunk.text !== '') chunks += 1;
  }
  expect(chunks).toBeGreaterThan(1);
  expect(joined?.text).toBe(whole.text);
  const [streamed, plain] = [usageOf(joined), usageOf(whole)];
  expect([streamed?.input_tokens, streamed?.output_tokens]).toEqual([plain?.input_tokens, plain?.output_tokens]);
});

it('throws on a fault mid-stream, after the text already sent', async () => {
  const model = chatAnthropic({ headers: { 'X-Emulator-Scenario': 'text-service-unavailable-midstream' } });
  const texts: string[] = [];
  const error = await rejection(
    (async () => {
      for await (const chunk of await model.stream('Say hello')) if (chunk.text !== '') texts.push(chunk.text);
    })(),
  );
  expect(texts).toHaveLength(5);
  expect(error).toMatchObject({ error: { type: 'error', error: { code: 'service_unavailable' } } });
});

it.each(['jsonSchema', 'functionCalling'] as const)('returns an object through ChatOpenAI.withStructuredOutput, method %s', async (method) => {
  const result = await chatOpenAI().withStructuredOutput(post, { method }).invoke('A post about plans');
  expect(post.parse(result)).toEqual(result);
});

it('calls a tool through ChatOpenAI when the tool is forced, then answers with its result', async () => {
  // The emulator calls a tool only when tool_choice forces one ("auto" gets a text answer).
  const question = new HumanMessage('What is the weather in Paris?');
  const call = await chatOpenAI().bindTools([weather], { tool_choice: 'weather' }).invoke([question]);
  const toolCall = call.tool_calls?.[0];
  if (!toolCall) throw new Error('expected a tool call');
  expect(toolCall.name).toBe('weather');
  const result = (await weather.invoke(toolCall)) as ToolMessage;
  expect(result).toBeInstanceOf(ToolMessage);
  const answer = await chatOpenAI().bindTools([weather], { tool_choice: 'none' }).invoke([question, call, result]);
  expect(answer.tool_calls).toEqual([]);
  expect(answer.text.length).toBeGreaterThan(0);
});

it('throws SyntaxError for withStructuredOutput with useResponsesApi: the Responses-style endpoint ignores text.format', async () => {
  // The openai SDK's responses.parse() parses the prose answer as JSON.
  await expect(chatOpenAI({ useResponsesApi: true }).withStructuredOutput(post).invoke('A post about plans')).rejects.toThrow(SyntaxError);
});

it('is refused 422 invalid_params for tools with useResponsesApi: the Responses-style endpoint takes no tools', async () => {
  const error = await rejection(chatOpenAI({ useResponsesApi: true }).bindTools([weather]).invoke('Weather in Paris?'));
  expect(error).toMatchObject({ status: 422, error: { code: 'invalid_params', param: 'tools' } });
});

it.each([
  { what: 'withStructuredOutput (a forced tool)', call: () => chatAnthropic().withStructuredOutput(post).invoke('A post') },
  { what: 'bindTools', call: () => chatAnthropic().bindTools([weather]).invoke('Weather in Paris?') },
])('is refused 422 invalid_params for ChatAnthropic.$what: the Messages-style endpoint takes no tools', async ({ call }) => {
  const error = await rejection(call());
  expect(error).toMatchObject({ status: 422, error: { type: 'error', error: { code: 'invalid_params', details: [{ field: 'tools' }] } } });
});

it('gets prose through ChatAnthropic.withStructuredOutput, method jsonSchema: output_config is not in the reference', async () => {
  await expect(chatAnthropic().withStructuredOutput(post, { method: 'jsonSchema' }).invoke('A post')).rejects.toThrow(OutputParserException);
});

it('sends a refused request again unless maxRetries is 0: LangChain retries a 422', async () => {
  const { sent, fetch } = recordingFetch();
  // One retry is enough to show it (and pauses a second or two); the default is six.
  await expect(chatAnthropic({ maxRetries: 1, fetch }).bindTools([weather]).invoke('Weather?')).rejects.toMatchObject({ status: 422 });
  expect(sent).toEqual([`${base}/v1/messages`, `${base}/v1/messages`]);
});

it('gets 401 invalid_api_key from ChatAnthropic when its base address ends in /v1 (it calls /v1/v1/messages)', async () => {
  const { sent, fetch } = recordingFetch();
  const error = await rejection(chatAnthropic({ anthropicApiUrl: `${base}/v1`, fetch }).invoke('Say hello'));
  expect(sent).toEqual([`${base}/v1/v1/messages`]);
  // x-api-key counts only on /v1/messages, so the wrong path shows as a missing key.
  expect(error).toMatchObject({ status: 401, error: { error: { code: 'invalid_api_key' } } });
});

/** A message's token counts (@langchain/core 1.4's message types infer `usage_metadata` as never). */
const usageOf = (message: { usage_metadata?: unknown } | undefined): UsageMetadata | undefined => message?.usage_metadata as UsageMetadata | undefined;

/** A fetch that notes the address of every request the client sends. */
function recordingFetch(): { sent: string[]; fetch: typeof fetch } {
  const sent: string[] = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push(input instanceof Request ? input.url : String(input));
      return globalThis.fetch(input, init);
    },
  };
}

/** The error a call rejects with; a call that succeeds fails the test. */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}
