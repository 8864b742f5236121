import { afterEach, beforeEach, expect, it } from 'vitest';
import { startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

async function refused(body: unknown): Promise<{ field: string; message: string }[]> {
  const res = await t.api.post('/v1/tasks', body);
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  const account = await t.admin.get('/_emulator/accounts/acct_demo');
  expect(account.body.frozen).toBe('0.000');
  return res.body.error.details;
}

const notes = (input: Record<string, unknown>) => ({ model: 'social-notes-data', input });
const video = (input: Record<string, unknown>) => ({ model: 'video-gen-2.0-fast', input });
const avatar = (input: Record<string, unknown>) => ({ model: 'avatar-photo', input });

// Combination rules of social-notes-data: a note for `note`, a user for `notes` and `profile`, a keyword for
// `search`, and agree must be true.
it.each([
  ['mode note without a note', notes({ mode: 'note', agree: true }), 'input.note', 'is required when mode is note'],
  ['mode notes without a user', notes({ mode: 'notes', agree: true }), 'input.user', 'is required when mode is notes'],
  ['mode profile without a user', notes({ mode: 'profile', agree: true }), 'input.user', 'is required when mode is profile'],
  ['mode search without a keyword', notes({ mode: 'search', agree: true }), 'input.keyword', 'is required when mode is search'],
  ['agree missing', notes({ mode: 'note', note: 'n' }), 'input.agree', 'is required'],
  ['agree false', notes({ mode: 'note', note: 'n', agree: false }), 'input.agree', 'must be true'],
  ['a default mode without a note', notes({ agree: true }), 'input.note', 'is required when mode is note'],
  ['mode note with an empty note', notes({ mode: 'note', note: '', agree: true }), 'input.note', 'must not be empty or only spaces'],
  ['mode notes with a blank user', notes({ mode: 'notes', user: '   ', agree: true }), 'input.user', 'must not be empty or only spaces'],
  ['mode profile with an empty user', notes({ mode: 'profile', user: '', agree: true }), 'input.user', 'must not be empty or only spaces'],
  ['mode search with an empty keyword', notes({ mode: 'search', keyword: '', agree: true }), 'input.keyword', 'must not be empty or only spaces'],
  ['mode search with a keyword of tabs and line breaks', notes({ mode: 'search', keyword: '\t\n ', agree: true }), 'input.keyword', 'must not be empty or only spaces'],
])('social-notes-data: refuses %s', async (_name, body, field, message) => {
  expect(await refused(body)).toEqual([{ field, message }]);
});

it('charges nothing and creates nothing for a blank keyword', async () => {
  const before = (await t.admin.get('/_emulator/accounts/acct_demo')).body;
  const res = await t.api.post('/v1/tasks', notes({ mode: 'search', keyword: ' ', agree: true }));
  expect(res.status).toBe(422);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body).toEqual(before);
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
});

it.each([
  ['an unknown mode', notes({ mode: 'feed', agree: true }), 'input.mode', 'must be one of: note, notes, profile, search'],
  ['a keyword over 50 characters', notes({ mode: 'search', keyword: 'k'.repeat(51), agree: true }), 'input.keyword', 'must NOT have more than 50 characters'],
  ['page 0', notes({ mode: 'search', keyword: 'k', page: 0, agree: true }), 'input.page', 'must be >= 1'],
  ['page 51', notes({ mode: 'search', keyword: 'k', page: '51', agree: true }), 'input.page', 'must be <= 50'],
  ['page 1.5', notes({ mode: 'search', keyword: 'k', page: '1.5', agree: true }), 'input.page', 'must be integer'],
  ['an unknown sort', notes({ mode: 'search', keyword: 'k', sort: 'new', agree: true }), 'input.sort', 'must be one of: general, hot, latest, comments, collects'],
  ['an unknown note_type', notes({ mode: 'search', keyword: 'k', note_type: 'gif', agree: true }), 'input.note_type', 'must be one of: all, video, image'],
  ['a note over 1000 characters', notes({ note: 'n'.repeat(1001), agree: true }), 'input.note', 'must NOT have more than 1000 characters'],
  ['a cursor over 500 characters', notes({ mode: 'notes', user: 'u', cursor: 'c'.repeat(501), agree: true }), 'input.cursor', 'must NOT have more than 500 characters'],
  ['agree as a string', notes({ note: 'n', agree: 'true' }), 'input.agree', 'must be boolean'],
])('social-notes-data: refuses %s', async (_name, body, field, message) => {
  expect(await refused(body)).toContainEqual({ field, message });
});

it.each([
  ['frames mode without a first frame', video({ mode: 'frames', prompt: 'p' }), 'input.image', 'is required when mode is frames'],
  ['reference mode with neither images nor portraits', video({ mode: 'reference', prompt: 'p' }), 'input.images', 'mode reference needs at least one reference image or portrait'],
  ['reference mode with empty lists', video({ mode: 'reference', prompt: 'p', images: [], portraits: [] }), 'input.images', 'mode reference needs at least one reference image or portrait'],
  ['video mode without a reference video', video({ mode: 'video', prompt: 'p' }), 'input.videos', 'is required when mode is video'],
  ['audio without images, portraits or videos', video({ mode: 'reference', prompt: 'p', audio: 'file_9' }), 'input.audio', 'needs reference images, portraits or reference videos'],
])('video-gen-2.0-fast: refuses %s', async (_name, body, field, message) => {
  expect(await refused(body)).toContainEqual({ field, message });
});

it('video-gen-2.0-fast: refuses more than 9 images and portraits together', async () => {
  const details = await refused(
    video({
      mode: 'reference',
      prompt: 'p',
      images: Array.from({ length: 5 }, (_, i) => `file_${i}`),
      portraits: ['a', 'b', 'c', 'd', 'e'],
    }),
  );
  expect(details).toEqual([{ field: 'input.images', message: 'together with portraits must have at most 9 items' }]);
});

it('video-gen-2.0-fast: accepts exactly 9 images and portraits together', async () => {
  const res = await t.api.post(
    '/v1/tasks',
    video({ mode: 'reference', prompt: 'p', images: ['https://cdn.example.com/1.jpg', 'https://cdn.example.com/2.jpg', 'https://cdn.example.com/3.jpg', 'https://cdn.example.com/4.jpg'], portraits: ['a', 'b', 'c', 'd', 'e'] }),
  );
  expect(res.status).toBe(200);
});

it.each([
  ['a missing prompt', video({}), 'input.prompt', 'is required'],
  ['an empty prompt', video({ prompt: '' }), 'input.prompt', 'must NOT have fewer than 1 characters'],
  ['a prompt over 2000 characters', video({ prompt: 'p'.repeat(2001) }), 'input.prompt', 'must NOT have more than 2000 characters'],
  ['duration 3', video({ prompt: 'p', duration: 3 }), 'input.duration', 'must be >= 4'],
  ['duration 16', video({ prompt: 'p', duration: '16' }), 'input.duration', 'must be <= 15'],
  ['duration 5.5', video({ prompt: 'p', duration: 5.5 }), 'input.duration', 'must be integer'],
  ['duration as words', video({ prompt: 'p', duration: 'five' }), 'input.duration', 'must be integer'],
  ['resolution 4k', video({ prompt: 'p', resolution: '4k' }), 'input.resolution', 'must be one of: 480p, 720p, 1080p'],
  ['ratio 2:1', video({ prompt: 'p', ratio: '2:1' }), 'input.ratio', 'must be one of: 16:9, 9:16, 1:1, 4:3, 3:4, 21:9, adaptive'],
  ['an unknown mode', video({ prompt: 'p', mode: 'audio' }), 'input.mode', 'must be one of: text, frames, reference, video'],
  ['a negative seed', video({ prompt: 'p', seed: -1 }), 'input.seed', 'must be >= 0'],
  ['a seed over 2147483647', video({ prompt: 'p', seed: 2147483648 }), 'input.seed', 'must be <= 2147483647'],
  ['sound as a number', video({ prompt: 'p', sound: 1 }), 'input.sound', 'must be boolean'],
  ['four reference videos', video({ mode: 'video', prompt: 'p', videos: ['file_1', 'file_2', 'file_3', 'file_4'] }), 'input.videos', 'must NOT have more than 3 items'],
  ['ten reference images', video({ mode: 'reference', prompt: 'p', images: Array.from({ length: 10 }, (_, i) => `file_${i}`) }), 'input.images', 'must NOT have more than 9 items'],
  ['an image that is not an address', video({ mode: 'frames', prompt: 'p', image: 'my photo.jpg' }), 'input.image', 'must match pattern "^(file_[0-9]+|https?://[^\\s]+)$"'],
])('video-gen-2.0-fast: refuses %s', async (_name, body, field, message) => {
  expect(await refused(body)).toContainEqual({ field, message });
});

it.each([
  ['drive audio without the speech audio', avatar({ image: 'file_1' }), ['input.audio'], 'is required when drive is audio'],
  ['drive text without copy or voice', avatar({ image: 'file_1', drive: 'text' }), ['input.content', 'input.voice_audio'], 'is required when drive is text'],
  ['drive text without the voice', avatar({ image: 'file_1', drive: 'text', content: 'hello' }), ['input.voice_audio'], 'is required when drive is text'],
])('avatar-photo: refuses %s', async (_name, body, fields, message) => {
  expect(await refused(body)).toEqual(fields.map((field) => ({ field, message })));
});

it.each([
  ['a missing image', avatar({ audio: 'file_2' }), 'input.image', 'is required'],
  ['copy of 1 character', avatar({ image: 'file_1', drive: 'text', content: 'h', voice_audio: 'file_3' }), 'input.content', 'must NOT have fewer than 2 characters'],
  ['copy over 1000 characters', avatar({ image: 'file_1', drive: 'text', content: 'h'.repeat(1001), voice_audio: 'file_3' }), 'input.content', 'must NOT have more than 1000 characters'],
  ['a prompt over 500 characters', avatar({ image: 'file_1', audio: 'file_2', prompt: 'p'.repeat(501) }), 'input.prompt', 'must NOT have more than 500 characters'],
  ['an unknown quality', avatar({ image: 'file_1', audio: 'file_2', quality: 'ultra' }), 'input.quality', 'must be one of: fast, standard, max'],
  ['an unknown drive', avatar({ image: 'file_1', drive: 'video' }), 'input.drive', 'must be one of: audio, text'],
])('avatar-photo: refuses %s', async (_name, body, field, message) => {
  expect(await refused(body)).toContainEqual({ field, message });
});

it('reports every problem at once, one detail each', async () => {
  const details = await refused({
    model: 'video-gen-2.0-fast',
    input: { prompt: '', duration: 99, resolution: '8k' },
    metadata: { ok: 'yes', bad: 42 },
  });
  expect(details).toEqual(
    expect.arrayContaining([
      { field: 'input.prompt', message: 'must NOT have fewer than 1 characters' },
      { field: 'input.duration', message: 'must be <= 15' },
      { field: 'input.resolution', message: 'must be one of: 480p, 720p, 1080p' },
      { field: 'metadata.bad', message: 'must be string' },
    ]),
  );
  expect(details).toHaveLength(4);
});

it('names the field as sent when the input comes as params', async () => {
  expect(await refused({ model: 'video-gen-2.0-fast', params: { duration: 2 } })).toEqual([
    { field: 'params.prompt', message: 'is required' },
    { field: 'params.duration', message: 'must be >= 4' },
  ]);
});

// When both are sent, `input` is the one used: a bad `input` is refused whatever `params` holds (a 500 once,
// found by the bad-input fuzz: the model's input went unchecked and the freeze met no resolution).
it.each([false, null, 'a string', [1]])('refuses an input of %j sent beside a params object', async (input) => {
  const details = await refused({ model: 'video-gen-2.0-fast', input, params: {} });
  expect(details).toContainEqual({ field: 'input', message: 'must be object' });
  expect(details).toContainEqual({ field: '', message: 'params counts only when input is not given' });
});

it('uses input when both are sent, whatever params holds', async () => {
  const res = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'a fox' }, params: 5 });
  expect(res.status).toBe(200);
  expect(res.body.input.prompt).toBe('a fox');
});

it.each([
  ['no model', { input: {} }, 'model', 'is required'],
  ['a numeric model', { model: 7, input: {} }, 'model', 'must be string'],
  ['no input', { model: 'social-notes-data' }, 'input', 'is required'],
  ['input as a string', { model: 'social-notes-data', input: 'mode=note' }, 'input', 'must be object'],
  ['a webhook_url that is not a URL', { model: 'social-notes-data', input: { note: 'n', agree: true }, webhook_url: 'not a url' }, 'webhook_url', 'must match format "uri"'],
])('refuses a submission with %s', async (_name, body, field, message) => {
  expect(await refused(body)).toContainEqual({ field, message });
});

it.each([
  ['17 keys', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'metadata', 'must NOT have more than 16 properties'],
  ['a 65-character key', { ['k'.repeat(65)]: 'v' }, `metadata.${'k'.repeat(65)}`, 'key must NOT have more than 64 characters'],
  ['an empty key', { '': 'v' }, 'metadata.', 'key must NOT have fewer than 1 characters'],
  ['a 513-character value', { k: 'v'.repeat(513) }, 'metadata.k', 'must NOT have more than 512 characters'],
  ['a number value', { k: 1 }, 'metadata.k', 'must be string'],
  ['an array', ['a'], 'metadata', 'must be object'],
])('refuses metadata with %s', async (_name, metadata, field, message) => {
  expect(await refused({ model: 'social-notes-data', input: { note: 'n', agree: true }, metadata })).toContainEqual({
    field,
    message,
  });
});

it('accepts metadata at its limits: 16 keys, 64-character keys, 512-character values', async () => {
  const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)]));
  const res = await t.api.post('/v1/tasks', { model: 'social-notes-data', input: { note: 'n', agree: true }, metadata });
  expect(res.status).toBe(200);
  expect(res.body.metadata).toEqual(metadata);
});

it.each([
  ['an empty key', ''],
  ['a 65-character key', 'k'.repeat(65)],
  ['a key with a space', 'has space'],
  ['a key with a non-ASCII character', 'clé'],
])('refuses an Idempotency-Key with %s', async (_name, key) => {
  const res = await t.api.send((r) =>
    r
      .post('/v1/tasks')
      .set('Authorization', 'Bearer sk-emulator-demo')
      .set('Idempotency-Key', key)
      .send({ model: 'social-notes-data', input: { note: 'n', agree: true } }),
  );
  expect(res.status).toBe(422);
  expect(res.body.error.details[0].field).toBe('Idempotency-Key');
});
