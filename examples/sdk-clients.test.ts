import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createEmulator } from 'svc-emulator';
import type { Emulator } from 'svc-emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';

// The official clients pointed at the emulator: only the base address and the key change.

let emulator: Emulator;
let openai: OpenAI;
let anthropic: Anthropic;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', log: () => undefined });
  const base = await emulator.listen(0);
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-emulator-demo' });
  anthropic = new Anthropic({ baseURL: base, apiKey: 'sk-emulator-demo' }); // no /v1 for this format
});
afterAll(() => emulator.close());

it('answers a chat completion, streamed', async () => {
  const stream = await openai.chat.completions.create({
    model: 'svc-text-lite',
    messages: [{ role: 'user', content: 'Say hello' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let completionTokens = 0;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    completionTokens = chunk.usage?.completion_tokens ?? completionTokens;
  }
  expect(text.length).toBeGreaterThan(0);
  expect(completionTokens).toBe(text.match(/\S+/g)?.length);
});

it('answers a Responses-style call', async () => {
  const response = await openai.responses.create({ model: 'svc-text-lite', input: 'Say hello', max_output_tokens: 8 });
  expect(response.id).toMatch(/^svcresp_/);
  expect(response.output_text.split(' ').length).toBeLessThanOrEqual(8);
});

it('answers a Messages-style call, streamed with the SDK helper', async () => {
  const message = await anthropic.messages.stream({ model: 'svc-text-lite', max_tokens: 32, messages: [{ role: 'user', content: 'Say hello' }] }).finalMessage();
  expect(message.id).toMatch(/^svcmsg_/);
  expect(message.stop_reason).toMatch(/^(end_turn|max_tokens)$/);
});
