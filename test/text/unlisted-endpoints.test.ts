import { readFileSync } from 'node:fs';
import Anthropic, { NotFoundError as AnthropicNotFound } from '@anthropic-ai/sdk';
import OpenAI, { NotFoundError as OpenAINotFound } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// Endpoints an official SDK has and the reference does not (docs/guides/text-calls.md lists them): each is
// answered 404 not_found in the error shape of its group, so the SDK raises its typed NotFoundError with a body
// it can read, not a parse failure or a 200 the client would trust.

let emulator: Emulator;
let base: string;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', log: () => undefined });
  base = await emulator.listen(0);
});
afterAll(() => emulator.close());

const REQUEST_ID = /^req_[a-z0-9]{24}$/;

it('answers countTokens of @anthropic-ai/sdk (POST /v1/messages/count_tokens) 404 in the Messages error shape', async () => {
  const anthropic = new Anthropic({ baseURL: base, apiKey: 'sk-emulator-demo', maxRetries: 0 });
  const err = await anthropic.messages
    .countTokens({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say hello' }] })
    .then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(AnthropicNotFound);
  const found = err as InstanceType<typeof AnthropicNotFound>;
  expect(found.status).toBe(404);
  expect(found.requestID).toMatch(REQUEST_ID);
  expect(found.error).toEqual({
    type: 'error',
    error: { type: 'not_found', code: 'not_found', message: 'No route for POST /v1/messages/count_tokens.', request_id: found.requestID },
  });
});

it('answers an OpenAI-format endpoint the reference lacks (embeddings) 404 in the Chat Completions error shape', async () => {
  const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-emulator-demo', maxRetries: 0 });
  const err = await openai.embeddings.create({ model: 'svc-text-lite', input: 'hello' }).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAINotFound);
  const found = err as InstanceType<typeof OpenAINotFound>;
  expect(found.status).toBe(404);
  // /v1/embeddings is no text endpoint of the reference: its group is "tasks and general".
  expect(found.error).toEqual({ code: 'not_found', message: 'No route for POST /v1/embeddings.', request_id: expect.stringMatching(REQUEST_ID) });
});

it('says so in the text-calls guide, with the answers these tests hold', () => {
  const guide = readFileSync(new URL('../../docs/guides/text-calls.md', import.meta.url), 'utf8');
  expect(guide).toContain('## What the reference has, and what it has not');
  expect(guide).toContain('`anthropic.messages.countTokens(...)` | 404 `{"type": "error", "error": {"type": "not_found", "code": "not_found", "message": "No route for POST /v1/messages/count_tokens.", "request_id": "req_…"}}`');
  expect(guide).toContain('404 `{"error": {"code": "not_found", "message": "No route for POST /v1/embeddings.", "request_id": "req_…"}}`');
});
