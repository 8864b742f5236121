import { afterEach, expect, it } from 'vitest';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

/**
 * A text call may carry images in base64: the three text endpoints take bodies up to 20 MB by default
 * (`--max-text-body-bytes`), while the other JSON endpoints keep 1 MB. Over the limit is 413 payload_too_large in
 * the endpoint's own error shape, refused from its Content-Length before the body is read.
 */
let t: TestEmulator;
afterEach(async () => t.close());

/** A photo of 1.2 MB as the clients send it: 1.6 MB of base64. */
const PHOTO = Buffer.alloc(1_200_000, 0x5a).toString('base64');

it('answers a chat call and a Messages call carrying a 1.2 MB photo', async () => {
  t = await startEmulator();
  const chat = await t.api.post('/v1/chat/completions', {
    model: 'svc-text-lite',
    max_tokens: 16,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this photo?' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PHOTO}` } }] }],
  });
  expect(chat.status).toBe(200);
  const messages = await t.api.post('/v1/messages', {
    model: 'svc-text-lite',
    max_tokens: 16,
    messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: PHOTO } }, { type: 'text', text: 'Describe it.' }] }],
  });
  expect(messages.status).toBe(200);
});

it('refuses a text body over 20 MB with 413 in the endpoint shape, and a task body over 1 MB as before', async () => {
  t = await startEmulator();
  const huge = Buffer.alloc(15_800_000, 0x5a).toString('base64');
  const chat = await t.api.post('/v1/chat/completions', { model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: huge }] });
  expect(chat.status).toBe(413);
  expect(chat.body.error).toMatchObject({ code: 'payload_too_large', type: 'payload_too_large', request_id: chat.headers['x-request-id'] });
  const task = await t.api.post('/v1/tasks', { ...socialNote(), metadata: { pad: 'x'.repeat(400) }, pad: 'x'.repeat(1_100_000) });
  expect(task.status).toBe(413);
  expect(task.body.error.code).toBe('payload_too_large');
});

it('takes a lower limit for the text endpoints when asked (textBodyLimit, --max-text-body-bytes)', async () => {
  t = await startEmulator({ textBodyLimit: 1024 * 1024 });
  const call = await t.api.post('/v1/messages', {
    model: 'svc-text-lite',
    max_tokens: 16,
    messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: PHOTO } }] }],
  });
  expect(call.status).toBe(413);
  expect(call.body).toMatchObject({ type: 'error', error: { type: 'payload_too_large', request_id: call.headers['x-request-id'] } });
  expect(parseStartOptions(['--max-text-body-bytes', '1048576'], {}).textBodyLimit).toBe(1048576);
  expect(parseStartOptions([], { SVC_EMULATOR_MAX_TEXT_BODY_BYTES: '2097152' }).textBodyLimit).toBe(2097152);
});
