import { afterEach, beforeEach, expect, it } from 'vitest';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const balance = async (id = 'acct_demo'): Promise<{ available: string; frozen: string }> =>
  (await t.admin.get(`/_emulator/accounts/${id}`)).body;

it('accepts a social-notes-data task as queued with 40.000 points frozen', async () => {
  const res = await t.api.post('/v1/tasks', { ...socialNote(), metadata: { order: '42' } });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    object: 'task',
    model: 'social-notes-data',
    status: 'queued',
    created_at: '2026-11-23T09:00:00+08:00',
    started_at: null,
    finished_at: null,
    points: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
    output: null,
    error: null,
    metadata: { order: '42' },
  });
  expect(res.body.id).toMatch(/^T261123090000[A-Z0-9]{6}$/);
  expect(await balance()).toMatchObject({ available: '99960.000', frozen: '40.000' });
});

it('freezes duration × the per-second price of the resolution for video-gen-2.0-fast', async () => {
  const res = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'a cat surfing' } });
  expect(res.status).toBe(200);
  expect(res.body.points.frozen).toBe('1188.000');
  expect(res.body.input).toEqual({
    mode: 'text',
    prompt: 'a cat surfing',
    ratio: '16:9',
    resolution: '720p',
    duration: 5,
    sound: true,
  });
  const hd = await t.api.post('/v1/tasks', {
    model: 'video-gen-2.0-fast',
    input: { prompt: 'a cat surfing', resolution: '1080p', duration: 15 },
  });
  expect(hd.body.points.frozen).toBe('8812.500');
  expect(await balance()).toMatchObject({ available: '89999.500', frozen: '10000.500' });
});

it('freezes 10 seconds per audio material at the quality price for avatar-photo', async () => {
  const standard = await t.api.post('/v1/tasks', {
    model: 'avatar-photo',
    input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' },
  });
  expect(standard.status).toBe(200);
  expect(standard.body.points.frozen).toBe('60.000');
  expect(standard.body.input).toEqual({
    image: 'https://cdn.example.com/p.jpg',
    drive: 'audio',
    audio: 'https://cdn.example.com/a.mp3',
    quality: 'standard',
  });
  const fastText = await t.api.post('/v1/tasks', {
    model: 'avatar-photo',
    input: {
      image: 'https://cdn.example.com/p.jpg',
      drive: 'text',
      content: 'Hello there',
      voice_audio: 'https://cdn.example.com/v.mp3',
      quality: 'fast',
      audio: 'https://cdn.example.com/a.mp3',
    },
  });
  expect(fastText.body.points.frozen).toBe('40.000');
  expect(fastText.body.input).not.toHaveProperty('audio');
});

it('normalizes: numeric strings become numbers, defaults are filled, irrelevant and unknown fields dropped', async () => {
  const res = await t.api.post('/v1/tasks', {
    model: 'social-notes-data',
    params: { mode: 'search', keyword: 'coffee', page: '3', note: 'dropped', user: 'dropped', colour: 'blue', agree: true },
  });
  expect(res.status).toBe(200);
  expect(res.body.input).toEqual({
    mode: 'search',
    keyword: 'coffee',
    sort: 'general',
    note_type: 'all',
    page: 3,
    agree: true,
  });
});

it('drops keyword, sort and page when mode is note, and fills mode when absent', async () => {
  const res = await t.api.post('/v1/tasks', {
    model: 'social-notes-data',
    input: { note: 'n1', keyword: 'k', sort: 'hot', page: 2, agree: true },
  });
  expect(res.body.input).toEqual({ mode: 'note', note: 'n1', agree: true });
});

it('normalizes equal requests to equal input whatever the field order and spelling', async () => {
  const a = await t.api.post('/v1/tasks', {
    model: 'video-gen-2.0-fast',
    input: { duration: '8', prompt: 'p', resolution: '480p' },
  });
  const b = await t.api.post('/v1/tasks', {
    model: 'video-gen-2.0-fast',
    params: { prompt: 'p', resolution: '480p', duration: 8, extra: 1, ratio: '16:9' },
  });
  expect(JSON.stringify(a.body.input)).toBe(JSON.stringify(b.body.input));
});

it('echoes metadata unchanged and gives {} when there is none', async () => {
  const metadata = { ['k'.repeat(64)]: 'v'.repeat(512), emoji: '🙂 ünïcode', empty: '' };
  const withMeta = await t.api.post('/v1/tasks', { ...socialNote(), metadata });
  expect(withMeta.status).toBe(200);
  expect(withMeta.body.metadata).toEqual(metadata);
  const got = await t.api.get(`/v1/tasks/${withMeta.body.id}`);
  expect(got.body.metadata).toEqual(metadata);
  const without = await t.api.post('/v1/tasks', socialNote());
  expect(without.body.metadata).toEqual({});
});

it('keeps __proto__ and constructor metadata keys as plain keys, polluting nothing', async () => {
  const raw = `{"model":"social-notes-data","input":{"note":"n","agree":true},"metadata":{"__proto__":"a","constructor":"b"}}`;
  const res = await t.api.send((r) =>
    r.post('/v1/tasks').set('Authorization', 'Bearer sk-emulator-demo').set('Content-Type', 'application/json').send(raw),
  );
  expect(res.status).toBe(200);
  expect(JSON.parse(res.text).metadata).toEqual(JSON.parse('{"__proto__":"a","constructor":"b"}'));
  expect(({} as Record<string, unknown>)['a']).toBeUndefined();
  expect(Object.getPrototypeOf({})).toBe(Object.prototype);
});

it('answers 404 model_unavailable for an unknown model and creates nothing', async () => {
  const res = await t.api.post('/v1/tasks', { model: 'video-gen-9', input: { prompt: 'x' } });
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('model_unavailable');
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
});

it('refuses with 402 insufficient_points, creating and freezing nothing', async () => {
  const poor = await t.admin.post('/_emulator/accounts', { points: '1000.000' });
  const key = (await t.admin.post(`/_emulator/accounts/${poor.body.id}/keys`, {})).body.key as string;
  const res = await t.as(key).post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  expect(res.status).toBe(402);
  expect(res.body.error.code).toBe('insufficient_points');
  expect(await balance(poor.body.id)).toMatchObject({ available: '1000.000', frozen: '0.000' });
  expect((await t.as(key).get('/v1/tasks')).body.data).toEqual([]);
  const cheap = await t.as(key).post('/v1/tasks', socialNote());
  expect(cheap.status).toBe(200);
});

it('freezes exactly the last available points', async () => {
  const acct = await t.admin.post('/_emulator/accounts', { points: '40.000' });
  const key = (await t.admin.post(`/_emulator/accounts/${acct.body.id}/keys`, {})).body.key as string;
  expect((await t.as(key).post('/v1/tasks', socialNote())).status).toBe(200);
  expect((await t.as(key).post('/v1/tasks', socialNote())).status).toBe(402);
  expect(await balance(acct.body.id)).toMatchObject({ available: '0.000', frozen: '40.000' });
});

it.each([
  ['http://hooks.example.com/cb', 'must be an https address'],
  ['https://127.0.0.1/cb', 'must not be an internal-network address'],
  ['https://localhost/cb', 'must not be an internal-network address'],
  ['https://[::1]/cb', 'must not be an internal-network address'],
  ['https://10.1.2.3/cb', 'must not be an internal-network address'],
  ['https://192.168.0.10/cb', 'must not be an internal-network address'],
  ['https://172.20.0.1/cb', 'must not be an internal-network address'],
  ['https://169.254.169.254/latest', 'must not be an internal-network address'],
])('refuses webhook_url %s with 422 invalid_params', async (url, message) => {
  const res = await t.api.post('/v1/tasks', { ...socialNote(), webhook_url: url });
  expect(res.status).toBe(422);
  expect(res.body.error.details).toEqual([{ field: 'webhook_url', message }]);
  expect(await balance()).toMatchObject({ frozen: '0.000' });
});

it('accepts a public https webhook_url', async () => {
  const res = await t.api.post('/v1/tasks', { ...socialNote(), webhook_url: 'https://hooks.example.com/cb' });
  expect(res.status).toBe(200);
});

it('accepts http and internal webhook addresses when started with --allow-insecure-webhooks', async () => {
  const loose = await startEmulator({ allowInsecureWebhooks: true });
  try {
    const res = await loose.api.post('/v1/tasks', { ...socialNote(), webhook_url: 'http://127.0.0.1:9999/cb' });
    expect(res.status).toBe(200);
  } finally {
    await loose.close();
  }
});
