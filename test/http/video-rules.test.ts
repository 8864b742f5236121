import Big from 'big.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { runTask, uploadFile } from '../support/tasks.ts';

// Rules of video-gen-2.0-fast that only its tables state: the 1080p price per million output tokens, which fields
// each mode keeps, the reference audio's length and the images' size limits.
// @see reference "Model: video-gen-2.0-fast" (input parameters, Price, Rules); "Task object": input

let t: TestEmulator;
let api: ApiClient;
beforeAll(async () => {
  t = await startEmulator();
  api = t.as((await newAccount(t, '1000000.000')).key);
  const scenarios = [1, 123_457, 100_000, 2_000_000].map((tokens) => ({
    name: `tokens-${tokens}`,
    queue_seconds: 0,
    processing_seconds: 0,
    outcome: 'succeeded',
    settle: { output_tokens: tokens },
  }));
  expect((await t.admin.post('/_emulator/scenarios', { scenarios })).status).toBe(201);
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const video = (input: Record<string, unknown>): Record<string, unknown> => ({ model: 'video-gen-2.0-fast', input: { prompt: 'p', ...input } });
const upload = (filename: string, mimeType: string, extra: Record<string, unknown> = {}, client = api): Promise<string> =>
  uploadFile(client, filename, mimeType, extra);

/** An image of exactly `bytes` bytes, uploaded once per size (JSON, Base64). */
const images = new Map<number, Promise<string>>();
function imageOf(bytes: number): Promise<string> {
  let id = images.get(bytes);
  if (!id) {
    id = api.post('/v1/files', { filename: `still-${bytes}.png`, content: Buffer.alloc(bytes, 0x5a).toString('base64') }).then((res) => {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.size).toBe(bytes);
      return res.body.id as string;
    });
    images.set(bytes, id);
  }
  return id;
}

// --- The 1080p price per million output tokens ---------------------------------------------------------------

it.each([
  [1, '0.007', '2937.493'],
  [100_000, '700.000', '2237.500'],
  [123_457, '864.199', '2073.301'],
  // Beyond the freeze the difference is collected: charged is the whole price, nothing refunded.
  [2_000_000, '14000.000', '0.000'],
])('settles a 1080p task with reference videos on %i output tokens at 7,000 points per million: %s', async (tokens, charged, refunded) => {
  const ref = await upload('ref.mp4', 'video/mp4', { duration: 6 });
  const task = await runTask(t, api, video({ mode: 'video', videos: [ref], resolution: '1080p' }), `tokens-${tokens}`);
  expect(task.status).toBe('succeeded');
  // 5 s × 587.5 per second is what was frozen; the tokens decide the charge.
  expect(task.points).toEqual({ frozen: '2937.500', charged, refunded });
  expect(task.output.usage).toEqual({ output_tokens: tokens });
});

it('charges a 1080p task with reference videos its reported output tokens × 7,000 ÷ 1,000,000 when no scenario sets them', async () => {
  const ref = await upload('ref.mp4', 'video/mp4', { duration: 9 });
  const task = await runTask(t, api, video({ mode: 'video', videos: [ref], resolution: '1080p', duration: 8 }));
  const tokens = task.output.usage.output_tokens as number;
  expect(Number.isInteger(tokens) && tokens > 0).toBe(true);
  expect(task.points.charged).toBe(new Big(tokens).times(7000).div(1_000_000).toFixed(3));
});

// --- Fields that do not apply to the mode ----------------------------------------------------------------------

/** What a mode needs to be accepted, beside the prompt. */
const NEEDS: Record<string, () => Promise<Record<string, unknown>>> = {
  text: () => Promise.resolve({}),
  frames: async () => ({ image: await upload('first.png', 'image/png') }),
  reference: async () => ({ images: [await upload('ref.png', 'image/png')] }),
  video: async () => ({ videos: [await upload('ref.mp4', 'video/mp4', { duration: 5 })] }),
};

/** Fields of another mode, as valid files of the caller's. */
const OTHER_FIELDS: Record<string, () => Promise<unknown>> = {
  image: () => upload('first.png', 'image/png'),
  last_image: () => upload('last.png', 'image/png'),
  images: async () => [await upload('ref.png', 'image/png')],
  portraits: () => Promise.resolve(['portrait-1']),
  videos: async () => [await upload('ref.mp4', 'video/mp4', { duration: 5 })],
  audio: () => upload('voice.mp3', 'audio/mpeg', { duration: 5 }),
};

it.each([
  ['text', ['image', 'last_image', 'images', 'portraits', 'videos', 'audio']],
  ['frames', ['images', 'portraits', 'videos', 'audio']],
  ['reference', ['image', 'last_image', 'videos']],
  ['video', ['image', 'last_image']],
])('drops %s mode\'s inapplicable fields %j from the stored input and the freeze', async (mode, dropped) => {
  const needed = await NEEDS[mode]!();
  const plain = await api.post('/v1/tasks', video({ mode, ...needed }), { 'X-Emulator-Scenario': 'slow' });
  expect(plain.status, JSON.stringify(plain.body)).toBe(200);
  const extra = Object.fromEntries(await Promise.all(dropped.map(async (field) => [field, await OTHER_FIELDS[field]!()])));
  const withExtra = await api.post('/v1/tasks', video({ mode, ...needed, ...extra }), { 'X-Emulator-Scenario': 'slow' });
  expect(withExtra.status, JSON.stringify(withExtra.body)).toBe(200);
  expect(withExtra.body.input).toEqual(plain.body.input);
  for (const field of dropped) expect(withExtra.body.input).not.toHaveProperty(field);
  expect(withExtra.body.points).toEqual(plain.body.points);
  expect((await api.get(`/v1/tasks/${withExtra.body.id}`)).body.input).toEqual(plain.body.input);
});

it('accepts a text-mode task whose first frame names no file at all, since the field is dropped before the file checks', async () => {
  const res = await api.post('/v1/tasks', video({ mode: 'text', image: 'file_999999', last_image: 'not an address' }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.input).toEqual({ mode: 'text', prompt: 'p', ratio: '16:9', resolution: '720p', duration: 5, sound: true });
});

it('prices a text-mode task sent with reference videos by the second, not on output tokens', async () => {
  const ref = await upload('ref.mp4', 'video/mp4', { duration: 6 });
  const task = await runTask(t, api, video({ mode: 'text', videos: [ref], resolution: '1080p' }), 'tokens-100000');
  expect(task.input).not.toHaveProperty('videos');
  // 5 s × 587.5, not 100,000 tokens × 7,000 per million.
  expect(task.points).toEqual({ frozen: '2937.500', charged: '2937.500', refunded: '0.000' });
  expect(task.output).not.toHaveProperty('usage');
});

it('replays a text-mode submission whose repeat adds a first-frame image, and freezes once', async () => {
  const own = await newAccount(t, '10000.000');
  const client = t.as(own.key);
  const key = { 'Idempotency-Key': 'text-mode-with-image' };
  const first = await client.post('/v1/tasks', video({ mode: 'text' }), key);
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  const image = await upload('first.png', 'image/png', {}, client);
  const again = await client.post('/v1/tasks', video({ mode: 'text', image, last_image: image }), key);
  expect(again.status, JSON.stringify(again.body)).toBe(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(first.body.id);
  expect((await t.admin.get(`/_emulator/accounts/${own.id}`)).body).toMatchObject({ available: '8812.000', frozen: '1188.000' });
  // The image applies in frames mode: there it is a different submission.
  const frames = await client.post('/v1/tasks', video({ mode: 'frames', image }), key);
  expect(frames.status).toBe(409);
  expect(frames.body.error.code).toBe('idempotency_conflict');
});

// --- The reference audio's length -----------------------------------------------------------------------------

it.each([
  ['reference', 1.9, 'must be at least 2 seconds long'],
  ['reference', 2, 'accepted'],
  ['reference', 15, 'accepted'],
  ['reference', 15.1, 'must be at most 15 seconds long'],
  ['video', 1.99, 'must be at least 2 seconds long'],
  ['video', 2, 'accepted'],
  ['video', 15, 'accepted'],
  ['video', 15.01, 'must be at most 15 seconds long'],
])('in %s mode takes a reference audio of %f s: %s', async (mode, seconds, refusal) => {
  const audio = await upload('voice.mp3', 'audio/mpeg', { duration: seconds });
  const needed = await NEEDS[mode]!();
  const res = await api.post('/v1/tasks', video({ mode, ...needed, audio }));
  if (refusal === 'accepted') {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.input.audio).toBe(audio);
  } else {
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'invalid_params', details: [{ field: 'input.audio', message: refusal }] });
  }
});

// --- 10MB images ---------------------------------------------------------------------------------------------

it.each([
  ['the first frame', 'frames', (big: string, small: string) => ({ image: big, last_image: small }), 'input.image'],
  ['the last frame', 'frames', (big: string, small: string) => ({ image: small, last_image: big }), 'input.last_image'],
  ['a reference image', 'reference', (big: string, small: string) => ({ images: [small, big] }), 'input.images[1]'],
  ['a reference image in video mode', 'video', (big: string, small: string) => ({ images: [big, small] }), 'input.images[0]'],
])('takes %s (%s mode) of exactly 10MB and refuses one a byte larger', async (_name, mode, fields, field) => {
  const needed = mode === 'video' ? await NEEDS['video']!() : {};
  const small = await imageOf(1024);
  const atLimit = await api.post('/v1/tasks', video({ mode, ...needed, ...fields(await imageOf(10 * MB), small) }));
  expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200);
  const over = await api.post('/v1/tasks', video({ mode, ...needed, ...fields(await imageOf(10 * MB + 1), small) }));
  expect(over.status).toBe(422);
  expect(over.body.error).toMatchObject({
    code: 'invalid_params',
    details: [{ field, message: `must be at most 10MB (is ${10 * MB + 1} bytes)` }],
  });
});
