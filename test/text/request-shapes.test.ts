import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

/**
 * Request shapes real clients send that the reference lists as supported, each through the official SDK that
 * sends it: a regression would otherwise go unnoticed (every other test sends the plainest body). Also two
 * limits at their documented values: the callback timeout at its default, and voice_audio's 20MB.
 */

const ADMIN = 'shapes-admin';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
let emulator: Emulator;
let base: string;
let openai: OpenAI;
let key: string;

async function admin<T>(path: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as T;
}

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  base = await emulator.listen(0);
  const account = await admin<{ id: string }>('/_emulator/accounts', { points: '1000.000' });
  key = (await admin<{ key: string }>(`/_emulator/accounts/${account.id}/keys`, {})).key;
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
});
afterEach(() => emulator.close());

it('answers a chat call with temperature, top_p, penalties, seed, stop and an image part', async () => {
  const answer = await openai.chat.completions.create({
    model: 'svc-text-lite',
    temperature: 0.2,
    top_p: 0.9,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    seed: 7,
    stop: ['\n\n'],
    max_tokens: 32,
    messages: [
      { role: 'system', content: 'You describe pictures.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
        ],
      },
    ],
  });
  expect(answer.id).toMatch(/^svcchat_/);
  expect(answer.choices[0]?.message.content).toEqual(expect.any(String));
  expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
});

it('answers a response to an array input with temperature and top_p, and says store false when asked to store', async () => {
  const answer = await openai.responses.create({
    model: 'svc-text-lite',
    instructions: 'Answer briefly.',
    temperature: 0.3,
    top_p: 0.8,
    store: true,
    max_output_tokens: 32,
    input: [
      { role: 'user', content: 'Hello there.' },
      { role: 'assistant', content: 'Hello! How can I help?' },
      { role: 'user', content: [{ type: 'input_text', text: 'Tell me a short story.' }] },
    ],
  });
  expect(answer.id).toMatch(/^svcresp_/);
  // Not in the SDK's type of a response, but in the answer: the reference says it is always false.
  expect((answer as unknown as { store: unknown }).store).toBe(false);
  expect(answer.output_text.length).toBeGreaterThan(0);
});

it('answers a message with system text blocks, an image block, temperature and top_p', async () => {
  // This SDK version's types leave out temperature and top_p (some of its models refuse them); it sends them all
  // the same, and the reference lists both.
  const params = {
    model: 'svc-text-lite',
    max_tokens: 32,
    temperature: 0.4,
    top_p: 0.7,
    system: [{ type: 'text', text: 'You describe pictures.' }, { type: 'text', text: 'Be brief.' }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'text', text: 'What is this?' },
        ],
      },
    ],
  } as unknown as Anthropic.MessageCreateParamsNonStreaming;
  const sent: string[] = [];
  const watched = new Anthropic({
    baseURL: base,
    apiKey: key,
    maxRetries: 0,
    fetch: async (input, init) => {
      sent.push(String(init?.body ?? ''));
      return fetch(input, init);
    },
  });
  const answer = await watched.messages.create(params);
  expect(JSON.parse(sent[0] ?? '{}')).toMatchObject({ temperature: 0.4, top_p: 0.7 });
  expect(answer.id).toMatch(/^svcmsg_/);
  expect(answer.content[0]?.type).toBe('text');
  expect(['end_turn', 'max_tokens']).toContain(answer.stop_reason);
});

it('fails a callback whose receiver has not answered after 10 s, the default timeout, and schedules the retry', async () => {
  const receiver = createServer((req) => req.resume());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const account = await admin<{ id: string }>('/_emulator/accounts', { points: '100.000', webhook_url: url });
    const owner = (await admin<{ key: string }>(`/_emulator/accounts/${account.id}/keys`, {})).key;
    const res = await fetch(`${base}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'instant' },
      body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } }),
    });
    const task = (await res.json()) as { id: string };
    const started = performance.now();
    await admin('/_emulator/clock/advance', { seconds: 0 });
    const waited = performance.now() - started;
    const list = await admin<{ data: { status: string; next_attempt_at: string | null; attempts: { error: string | null; duration_ms: number }[] }[] }>(
      `/_emulator/webhooks/deliveries?task_id=${task.id}`,
    );
    const [message] = list.data;
    expect(message?.attempts[0]?.error).toMatch(/10000 ms/);
    expect(message?.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(9_900);
    expect(waited).toBeGreaterThanOrEqual(9_900);
    expect(message?.status).toBe('pending');
    expect(message?.next_attempt_at).not.toBeNull();
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});

it('takes a voice_audio of exactly 20MB and refuses one a byte larger, naming input.voice_audio', async () => {
  const upload = async (bytes: number, filename: string, mimeType: string, fields: Record<string, string> = {}): Promise<string> => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([Buffer.alloc(bytes, 1)], { type: mimeType }), filename);
    const res = await fetch(`${base}/v1/files`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  const photo = await upload(1024, 'face.png', 'image/png', { width: '720', height: '1280' });
  const submit = (voice: string): Promise<Response> =>
    fetch(`${base}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'avatar-photo', input: { image: photo, drive: 'text', content: 'Hello there, everyone.', voice_audio: voice } }),
    });
  const limit = 20 * 1024 * 1024;
  const fits = await submit(await upload(limit, 'voice.mp3', 'audio/mpeg', { duration: '10' }));
  expect(fits.status).toBe(200);
  const over = await submit(await upload(limit + 1, 'voice.mp3', 'audio/mpeg', { duration: '10' }));
  expect(over.status).toBe(422);
  const body = (await over.json()) as { error: { code: string; details: { field: string; message: string }[] } };
  expect(body.error.code).toBe('invalid_params');
  expect(body.error.details).toEqual([{ field: 'input.voice_audio', message: expect.stringMatching(/20MB|20971520/) }]);
});
