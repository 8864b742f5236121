import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, NoObjectGeneratedError, Output, stepCountIs, streamText, tool } from 'ai';
import type { LanguageModel } from 'ai';
import { createEmulator } from 'svc-emulator';
import type { Emulator } from 'svc-emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';

// The Vercel AI SDK (ai 6, @ai-sdk/openai 3, @ai-sdk/anthropic 3) pointed at the emulator.
//
//   createOpenAI({ baseURL: `${base}/v1` })     openai.chat(model): Chat Completions; openai(model): Responses
//   createAnthropic({ baseURL: `${base}/v1` })  Messages. This provider appends only `/messages`, so its base
//                                               address keeps /v1 (the official @anthropic-ai/sdk takes none).
//
// Text and streams work on all three endpoints. Structured output and tools work on openai.chat only: the
// reference gives the Responses-style endpoint neither `text.format` nor `tools`, and the Messages-style one no
// `tools` (which is how this SDK asks Anthropic models for an object).

let emulator: Emulator;
let base: string;
let openai: ReturnType<typeof createOpenAI>;
let anthropic: ReturnType<typeof createAnthropic>;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', log: () => undefined });
  base = await emulator.listen(0);
  openai = createOpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-emulator-demo' });
  anthropic = createAnthropic({ baseURL: `${base}/v1`, apiKey: 'sk-emulator-demo' });
});
afterAll(() => emulator.close());

const post = z.object({ title: z.string(), tags: z.array(z.string()) });

// For unknown models @ai-sdk/anthropic sends max_tokens 4096 (and warns): say how many you want, since the
// maximum is what the call freezes.
const endpoints: { endpoint: string; model: () => LanguageModel; id: RegExp }[] = [
  { endpoint: 'chat completions, openai.chat()', model: () => openai.chat('svc-text-lite'), id: /^svcchat_/ },
  { endpoint: 'responses, openai()', model: () => openai('svc-text-lite'), id: /^svcresp_/ },
  { endpoint: 'messages, anthropic()', model: () => anthropic('svc-text-lite'), id: /^svcmsg_/ },
];

it.each(endpoints)('generates text on $endpoint', async ({ model, id }) => {
  const result = await generateText({ model: model(), prompt: 'Say hello', maxOutputTokens: 256 });
  expect(result.response.id).toMatch(id);
  expect(result.text.length).toBeGreaterThan(0);
  expect(result.finishReason).toBe('stop');
  expect(result.usage.outputTokens).toBeGreaterThan(0);
  expect(result.usage.totalTokens).toBe((result.usage.inputTokens ?? 0) + (result.usage.outputTokens ?? 0));
});

it.each(endpoints)('streams on $endpoint: the chunks join to the text a plain call gets, with the same usage', async ({ model }) => {
  // The emulator's answer depends only on the request, so the same prompt streamed or not gives the same text.
  const whole = await generateText({ model: model(), prompt: 'Tell me about the plan', maxOutputTokens: 256 });
  const stream = streamText({ model: model(), prompt: 'Tell me about the plan', maxOutputTokens: 256 });
  const chunks: string[] = [];
  for await (const chunk of stream.textStream) chunks.push(chunk);
  expect(chunks.length).toBeGreaterThan(1);
  expect(chunks.join('')).toBe(whole.text);
  expect(await stream.finishReason).toBe('stop');
  const usage = await stream.usage;
  expect([usage.inputTokens, usage.outputTokens]).toEqual([whole.usage.inputTokens, whole.usage.outputTokens]);
});

it('reports a fault mid-stream as an error part and finishReason "error", keeping the text already sent', async () => {
  const errors: unknown[] = [];
  const stream = streamText({
    model: anthropic('svc-text-lite'),
    prompt: 'Say hello',
    maxOutputTokens: 256,
    headers: { 'X-Emulator-Scenario': 'text-service-unavailable-midstream' },
    onError: ({ error }) => void errors.push(error),
  });
  const chunks: string[] = [];
  for await (const chunk of stream.textStream) chunks.push(chunk);
  expect(chunks).toHaveLength(5);
  expect(await stream.finishReason).toBe('error');
  expect(errors).toEqual([expect.objectContaining({ type: 'service_unavailable' })]);
});

it('returns an object through openai.chat: the schema goes as response_format json_schema', async () => {
  const result = await generateText({ model: openai.chat('svc-text-lite'), output: Output.object({ schema: post }), prompt: 'A post about plans' });
  expect(post.parse(result.output)).toEqual(result.output);
  expect(result.request.body).toMatchObject({ response_format: { type: 'json_schema', json_schema: { strict: true } } });
});

it('calls a tool through openai.chat when the tool is forced, then answers with its result', async () => {
  const cities: string[] = [];
  const weather = tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: ({ city }) => {
      cities.push(city);
      return Promise.resolve({ city, celsius: 21 });
    },
  });
  // The emulator calls a tool only when tool_choice forces one ("auto" gets a text answer), so the first step
  // forces it and the second asks for the answer.
  const result = await generateText({
    model: openai.chat('svc-text-lite'),
    prompt: 'What is the weather in Paris?',
    tools: { weather },
    stopWhen: stepCountIs(2),
    prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'none' }),
  });
  expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  expect(cities).toHaveLength(1);
  expect(result.text.length).toBeGreaterThan(0);
});

it('gets prose, not an object, through openai(): the Responses-style endpoint ignores text.format', async () => {
  const error = await rejection(generateText({ model: openai('svc-text-lite'), output: Output.object({ schema: post }), prompt: 'A post about plans' }));
  expect(NoObjectGeneratedError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ finishReason: 'stop', cause: { name: 'AI_JSONParseError' } });
  expect(() => JSON.parse((error as NoObjectGeneratedError).text ?? '')).toThrow(SyntaxError);
});

it('is refused 422 invalid_params when a tool goes to openai(): the Responses-style endpoint takes no tools', async () => {
  const error = await rejection(generateText({ model: openai('svc-text-lite'), prompt: 'Weather in Paris?', tools: { weather: tool({ inputSchema: z.object({ city: z.string() }) }) } }));
  expect(APICallError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ statusCode: 422, url: `${base}/v1/responses` });
  expect(JSON.parse((error as APICallError).responseBody ?? '')).toMatchObject({ error: { code: 'invalid_params', param: 'tools' } });
});

it('is refused 422 invalid_params when an object is asked of anthropic(): the SDK sends it as a tool', async () => {
  const error = await rejection(generateText({ model: anthropic('svc-text-lite'), output: Output.object({ schema: post }), prompt: 'A post', maxOutputTokens: 256 }));
  expect(APICallError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ statusCode: 422, url: `${base}/v1/messages`, requestBodyValues: { tools: [{ name: 'json' }] } });
  expect(JSON.parse((error as APICallError).responseBody ?? '')).toMatchObject({
    type: 'error',
    error: { code: 'invalid_params', details: [{ field: 'tools' }] },
  });
});

it('gets prose through anthropic() with structuredOutputMode "outputFormat": output_config is not in the reference', async () => {
  const error = await rejection(
    generateText({
      model: anthropic('svc-text-lite'),
      output: Output.object({ schema: post }),
      prompt: 'A post',
      maxOutputTokens: 256,
      providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } },
    }),
  );
  expect(NoObjectGeneratedError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ cause: { name: 'AI_JSONParseError' } });
});

it('gets 404 not_found from anthropic() when its base address lacks /v1', async () => {
  const withoutV1 = createAnthropic({ baseURL: base, apiKey: 'sk-emulator-demo' });
  const error = await rejection(generateText({ model: withoutV1('svc-text-lite'), prompt: 'Say hello', maxOutputTokens: 256 }));
  expect(APICallError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ statusCode: 404, url: `${base}/messages` });
  expect(JSON.parse((error as APICallError).responseBody ?? '')).toMatchObject({ error: { code: 'not_found' } });
});

/** The error a call rejects with; a call that succeeds fails the test. */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}
