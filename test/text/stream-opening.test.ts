import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Emulator } from '../../src/index.ts';
import { startAnswersWorld } from '../support/answers-world.ts';
import type { AnswersWorld } from '../support/answers-world.ts';

// A stream's first events go out before its answer is made (src/text/call.ts): what they say of the answer (tool
// calls or text, the input tokens) must be what the answer then is, and what the same call answers unstreamed.

let emulator: Emulator;
let openai: OpenAI;
let anthropic: Anthropic;
let load: AnswersWorld['load'];

beforeEach(async () => {
  let base: string;
  let key: string;
  ({ emulator, base, key, load } = await startAnswersWorld({}, '100000.000'));
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0 });
});
afterEach(() => emulator.close());

const TOOL: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } },
};

async function chatStream(body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming): Promise<{ first: OpenAI.Chat.ChatCompletionChunk; chunks: OpenAI.Chat.ChatCompletionChunk[] }> {
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of await openai.chat.completions.create({ ...body, stream: true })) chunks.push(chunk);
  const first = chunks[0];
  if (!first) throw new Error('no chunk');
  return { first, chunks };
}

it('opens a chat stream with content null exactly when its answer is tool calls: a forced tool, stated tool calls, a fixed text over a forced tool', async () => {
  await load([
    { name: 'stated-tools', match: { last_user: { contains: 'stated' } }, text: { tool_calls: [{ name: 'lookup', arguments: { q: 'x' } }] } },
    { name: 'fixed-text', match: { last_user: { contains: 'fixed' } }, text: { text: 'A fixed answer.' } },
  ]);
  const cases: { say: string; forced: boolean; tools: boolean }[] = [
    { say: 'Plain words, please.', forced: false, tools: false },
    { say: 'Look it up.', forced: true, tools: true },
    { say: 'The stated ones.', forced: false, tools: true },
    { say: 'The fixed one.', forced: true, tools: false },
  ];
  for (const { say, forced, tools } of cases) {
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: 'svc-text-lite',
      messages: [{ role: 'user', content: say }],
      max_tokens: 40,
      tools: [TOOL],
      ...(forced ? { tool_choice: { type: 'function', function: { name: 'lookup' } } } : {}),
    };
    const { first, chunks } = await chatStream(body);
    expect(first.choices[0]?.delta, say).toEqual({ role: 'assistant', content: tools ? null : '' });
    const streamedTools = chunks.some((c) => (c.choices[0]?.delta.tool_calls?.length ?? 0) > 0);
    expect(streamedTools, say).toBe(tools);
    const whole = await openai.chat.completions.create(body);
    expect(whole.choices[0]?.message.content === null, say).toBe(tools);
    expect((whole.choices[0]?.message.tool_calls?.length ?? 0) > 0, say).toBe(tools);
  }
});

it("opens a Messages stream with the input tokens its answer reports, counted or stated by the scenario", async () => {
  await load([{ name: 'stated-input', match: { last_user: { contains: 'stated' } }, text: { input_tokens: 1234, output_tokens: 7 } }]);
  for (const say of ['Count my words, all five of them.', 'The stated count.']) {
    const params = { model: 'svc-text-lite', max_tokens: 30, messages: [{ role: 'user' as const, content: say }] };
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const event of await anthropic.messages.create({ ...params, stream: true })) events.push(event);
    const start = events[0];
    if (start?.type !== 'message_start') throw new Error(`first event: ${start?.type}`);
    const whole = await anthropic.messages.create(params);
    expect(start.message.usage.input_tokens, say).toBe(whole.usage.input_tokens);
    if (say.includes('stated')) expect(whole.usage.input_tokens).toBe(1234);
    const text = events.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? [e.delta.text] : [])).join('');
    expect(text, say).toBe(whole.content[0]?.type === 'text' ? whole.content[0].text : null);
  }
});

it('streams a Responses answer whose final text and usage are the unstreamed answer', async () => {
  const params = { model: 'svc-text-lite', input: 'Tell me about lighthouses.', max_output_tokens: 25 };
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await openai.responses.create({ ...params, stream: true })) events.push(event);
  expect(events[0]?.type).toBe('response.created');
  const created = events[0]?.type === 'response.created' ? events[0].response : null;
  expect(created?.usage ?? null).toBeNull();
  const completed = events.at(-1);
  const whole = await openai.responses.create(params);
  const final = completed?.type === 'response.completed' || completed?.type === 'response.incomplete' ? completed.response : null;
  const item = final?.output[0];
  const finalText = item?.type === 'message' ? item.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('') : null;
  expect(finalText).toBe(whole.output_text);
  expect(final?.status).toBe(whole.status);
  expect(final?.usage).toEqual(whole.usage);
  const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
  expect(deltas).toBe(whole.output_text);
});
