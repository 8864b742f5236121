import { afterEach, beforeEach, expect, it } from 'vitest';
import { startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { resolveTestHost } from '../support/hosts.ts';

// File parameters of tasks follow the callback-address policy: an address that is not the emulator's own must be
// public https, as written and as its name resolves (reference "POST /v1/tasks" rule 3).

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator({ resolveHost: resolveTestHost });
});
afterEach(() => t.close());

const PUBLIC_AUDIO = 'https://public.example.net/a.mp3';
const PUBLIC_IMAGE = 'https://public.example.net/p.png';
const avatar = (input: Record<string, unknown>): Record<string, unknown> => ({ model: 'avatar-photo', input });
const videoRef = (videos: string[]): Record<string, unknown> => ({
  model: 'video-gen-2.0-fast',
  input: { mode: 'video', prompt: 'the dance from video 1', videos },
});

async function refused(body: Record<string, unknown>, client = t): Promise<{ field: string; message: string }[]> {
  const res = await client.api.post('/v1/tasks', body);
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect((await client.api.get('/v1/tasks')).body.data).toEqual([]);
  return res.body.error.details;
}

const INTERNAL_LITERALS = [
  'https://127.0.0.1/p.png',
  'https://10.0.0.1/p.png',
  'https://localhost/p.png',
  'https://[::1]/p.png',
  'https://169.254.169.254/latest/meta-data',
  'https://192.168.1.20/p.png',
  'https://[fd00::1]/p.png',
  'https://[::ffff:127.0.0.1]/p.png',
  'https://[::127.0.0.1]/p.png',
  'https://[64:ff9b::7f00:1]/p.png',
  'https://[2002:7f00:1::]/p.png',
  'https://[fec0::1]/p.png',
];

it.each(INTERNAL_LITERALS)('refuses %s as input.image with 422 invalid_params', async (image) => {
  expect(await refused(avatar({ image, audio: PUBLIC_AUDIO }))).toEqual([
    { field: 'input.image', message: 'must not be an internal-network address' },
  ]);
});

it('names each refused element of a list, and every refused field at once', async () => {
  const details = await refused(videoRef(['https://public.example.net/a.mp4', 'https://[::1]/b.mp4', 'https://10.0.0.1/c.mp4']));
  expect(details).toEqual([
    { field: 'input.videos[1]', message: 'must not be an internal-network address' },
    { field: 'input.videos[2]', message: 'must not be an internal-network address' },
  ]);
  const both = await refused(avatar({ image: 'https://localhost/p.png', audio: 'https://loopback.example.net/a.mp3' }));
  expect(both.map((d) => d.field)).toEqual(['input.image', 'input.audio']);
});

it('names the field as the caller spelled it when input is sent as params', async () => {
  const details = await refused({ model: 'avatar-photo', params: { image: PUBLIC_IMAGE, audio: 'https://127.0.0.1/a.mp3' } });
  expect(details).toEqual([{ field: 'params.audio', message: 'must not be an internal-network address' }]);
});

it.each(['loopback.example.net', 'metadata.example.net', 'nat64.example.net', 'mixed.example.net'])(
  'refuses a file address whose name resolves to an internal address: %s',
  async (host) => {
    const details = await refused(avatar({ image: `https://${host}/p.png`, audio: PUBLIC_AUDIO }));
    expect(details).toEqual([
      { field: 'input.image', message: expect.stringMatching(/^must not resolve to an internal-network address \(.+ is .+\)$/) },
    ]);
  },
);

it('accepts public https addresses, names that resolve only to public addresses and names that do not resolve', async () => {
  const res = await t.api.post('/v1/tasks', avatar({ image: 'https://93.184.216.34/p.png', audio: PUBLIC_AUDIO }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const video = await t.api.post('/v1/tasks', videoRef(['https://not-yet.example.org/a.mp4', 'https://[2606:2800:220:1::]/b.mp4']));
  expect(video.status, JSON.stringify(video.body)).toBe(200);
});

it('still refuses a plain http file address with the file-parameter message', async () => {
  expect(await refused(avatar({ image: 'http://public.example.net/p.png', audio: PUBLIC_AUDIO }))).toEqual([
    { field: 'input.image', message: 'must be a file address from POST /v1/files or a public https address' },
  ]);
});

it("accepts the emulator's own files by id and by its (loopback) address", async () => {
  const upload = async (filename: string, content: string): Promise<{ id: string; url: string }> => {
    const res = await t.api.post('/v1/files', { content: Buffer.from(content).toString('base64'), filename });
    expect(res.status).toBe(200);
    return res.body;
  };
  const image = await upload('face.png', 'not really a picture');
  const audio = await upload('speech.mp3', 'ID3 not really speech');
  expect(new URL(image.url).hostname).toBe('127.0.0.1');
  const res = await t.api.post('/v1/tasks', avatar({ image: image.url, audio: audio.id }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});

it('lifts the rule with --allow-insecure-webhooks, for local work', async () => {
  const loose = await startEmulator({ allowInsecureWebhooks: true, resolveHost: resolveTestHost });
  try {
    for (const image of ['https://127.0.0.1/p.png', 'https://[::1]/p.png', 'https://loopback.example.net/p.png', 'http://localhost:8080/p.png']) {
      const res = await loose.api.post('/v1/tasks', avatar({ image, audio: PUBLIC_AUDIO }));
      expect(res.status, `${image}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  } finally {
    await loose.close();
  }
});
