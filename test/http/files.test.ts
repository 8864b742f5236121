import request from 'supertest';
import type { Response } from 'supertest';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEMO_KEY, newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { stateOf } from '../support/state.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const bearer = { Authorization: `Bearer ${DEMO_KEY}` };
const PUBLIC_URL = 'http://127.0.0.1:4010';
const MB = 1024 * 1024;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3]);
const MP3 = Buffer.from('ID3\u0004\u0000 pretend this is speech', 'latin1');
const MP4 = Buffer.from('\u0000\u0000\u0000\u0018ftypisom pretend this is a video', 'latin1');

interface Detail {
  field: string;
  message: string;
}

const advance = (seconds: number): Promise<Response> => t.admin.post('/_emulator/clock/advance', { seconds });

/** POST /v1/files with JSON and Base64 content; 200 expected. */
async function uploadJson(
  bytes: Buffer,
  fields: Record<string, unknown>,
  client: ApiClient = t.api,
): Promise<Record<string, unknown> & { id: string; url: string }> {
  const res = await client.post('/v1/files', { content: bytes.toString('base64'), ...fields });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A GET of an emulator file address, on the app (it is not listening), the body read as raw bytes. */
function download(url: string): Promise<Response> {
  const { pathname } = new URL(url);
  return request(t.emulator.app)
    .get(pathname)
    .buffer(true)
    .parse((res, callback) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => callback(null, Buffer.concat(chunks)));
    });
}

/** A general error body whose request id is the X-Request-Id header; returns its details. */
function expectError(res: Response, status: number, code: string): Detail[] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error).toMatchObject({ code, message: expect.any(String), request_id: res.headers['x-request-id'] });
  expect(res.headers['x-request-id']).toMatch(/^req_[a-z0-9]{24}$/);
  return (res.body.error.details ?? []) as Detail[];
}

const fields = (details: Detail[]): string[] => details.map((d) => d.field);

/** A refused task: 422 invalid_params, nothing frozen. Returns the details. */
async function refusedTask(body: Record<string, unknown>, client: ApiClient = t.api): Promise<Detail[]> {
  const res = await client.post('/v1/tasks', body);
  const details = expectError(res, 422, 'invalid_params');
  const account = await t.admin.get('/_emulator/accounts/acct_demo');
  expect(account.body.frozen).toBe('0.000');
  return details;
}

const avatar = (input: Record<string, unknown>): Record<string, unknown> => ({ model: 'avatar-photo', input });
const videoRef = (videos: string[]): Record<string, unknown> => ({
  model: 'video-gen-2.0-fast',
  input: { mode: 'video', prompt: 'the dance from video 1', videos },
});

// --- Uploading -----------------------------------------------------------------------------------------------

it('stores a Base64 JSON upload and answers its file record, the mime type from the file name', async () => {
  const res = await t.api.post('/v1/files', {
    content: PNG.toString('base64'),
    filename: 'face.png',
    width: 640,
    height: 480,
  });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    id: expect.stringMatching(/^file_[0-9]+$/),
    object: 'file',
    url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:4010\/files\/[A-Za-z0-9]+\.png$/),
    filename: 'face.png',
    type: 'image',
    mime_type: 'image/png',
    size: PNG.length,
    duration: null,
    width: 640,
    height: 480,
    created_at: '2026-11-23T09:00:00+08:00',
    expires_at: '2026-11-30T09:00:00+08:00',
  });
});

it.each([
  ['clip.MOV', {}, 'video/quicktime', 'video'],
  ['speech.mp3', {}, 'audio/mpeg', 'audio'],
  ['voice.m4a', {}, 'audio/mp4', 'audio'],
  ['notes.txt', {}, 'text/plain', 'file'],
  ['blob.xyz', {}, 'application/octet-stream', 'file'],
  ['speech.bin', { mime_type: 'audio/wav' }, 'audio/wav', 'audio'],
])('types %s %j as %s (%s)', async (filename, extra, mimeType, type) => {
  const file = await uploadJson(Buffer.from('some bytes'), { filename, ...extra });
  expect(file).toMatchObject({ filename, mime_type: mimeType, type });
});

it('names a file without a file name "upload", of type file', async () => {
  const file = await uploadJson(Buffer.from('xyz'), {});
  expect(file).toMatchObject({ filename: 'upload', mime_type: 'application/octet-stream', type: 'file', size: 3 });
  expect(file.url).toMatch(/\.bin$/);
});

it('counts size as the decoded byte count, not the Base64 length', async () => {
  expect((await uploadJson(Buffer.from('hello'), { filename: 'a.txt' })).size).toBe(5);
  const big = Buffer.alloc(300_000, 7);
  const file = await uploadJson(big, { filename: 'b.bin' });
  expect(file.size).toBe(300_000);
});

it('gives every upload its own id and its own unguessable address', async () => {
  const a = await uploadJson(PNG, { filename: 'same.png' });
  const b = await uploadJson(PNG, { filename: 'same.png' });
  expect(a.id).not.toBe(b.id);
  expect(a.url).not.toBe(b.url);
  expect(new URL(a.url).pathname).toMatch(/^\/files\/[A-Za-z0-9]{16,}\.png$/);
});

it('serves the uploaded bytes back at the url, with the Content-Type and no key needed', async () => {
  const file = await uploadJson(PNG, { filename: 'face.png' });
  const res = await download(file.url);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^image\/png/);
  expect(Buffer.isBuffer(res.body)).toBe(true);
  expect((res.body as Buffer).equals(PNG)).toBe(true);
});

it('serves the declared mime type, not the one of the extension', async () => {
  const file = await uploadJson(MP3, { filename: 'speech.bin', mime_type: 'audio/wav' });
  const res = await download(file.url);
  expect(res.headers['content-type']).toMatch(/^audio\/wav/);
  expect((res.body as Buffer).equals(MP3)).toBe(true);
});

it('stores a multipart upload, converting its numeric text fields', async () => {
  const res = await t.api.send((r) =>
    r
      .post('/v1/files')
      .set(bearer)
      .attach('file', MP3, { filename: 'speech.mp3', contentType: 'audio/mpeg' })
      .field('duration', '12.5'),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({
    id: expect.stringMatching(/^file_[0-9]+$/),
    object: 'file',
    url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:4010\/files\/[A-Za-z0-9]+\.mp3$/),
    filename: 'speech.mp3',
    type: 'audio',
    mime_type: 'audio/mpeg',
    size: MP3.length,
    duration: 12.5,
    width: null,
    height: null,
    created_at: '2026-11-23T09:00:00+08:00',
    expires_at: '2026-11-30T09:00:00+08:00',
  });
  const served = await download(res.body.url);
  expect(served.headers['content-type']).toMatch(/^audio\/mpeg/);
  expect((served.body as Buffer).equals(MP3)).toBe(true);
});

it('types a multipart octet-stream part by its file name and converts width and height to integers', async () => {
  const res = await t.api.send((r) =>
    r
      .post('/v1/files')
      .set(bearer)
      .field('width', '1280')
      .field('height', '720')
      .field('duration', '8')
      .attach('file', MP4, { filename: 'clip.mp4', contentType: 'application/octet-stream' }),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({
    filename: 'clip.mp4',
    type: 'video',
    mime_type: 'video/mp4',
    size: MP4.length,
    width: 1280,
    height: 720,
    duration: 8,
  });
});

it('refuses a multipart body without a file part with 422 invalid_params naming file', async () => {
  const res = await t.api.send((r) => r.post('/v1/files').set(bearer).field('duration', '3'));
  expect(expectError(res, 422, 'invalid_params')).toEqual([{ field: 'file', message: 'is required' }]);
  expect(stateOf(t.emulator).files).toEqual([]);
});

/** A multipart/form-data body written by hand: each part its Content-Disposition (and Content-Type, if given). */
function multipartBody(parts: { disposition: string; type?: string; content: Buffer | string }[]): { type: string; body: Buffer } {
  const boundary = 'wire-test-boundary-7MA4YWxkTrZu0gW';
  const chunks = parts.flatMap((part) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: ${part.disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`),
    Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content, 'utf8'),
    Buffer.from('\r\n'),
  ]);
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]) };
}

function postMultipart(parts: Parameters<typeof multipartBody>[0]): Promise<Response> {
  const { type, body } = multipartBody(parts);
  return t.api.send((r) => r.post('/v1/files').set(bearer).set('Content-Type', type).send(body));
}

/** Bytes that are not UTF-8 text (a PNG signature, stray continuation bytes, a NUL). */
const NOT_TEXT = Buffer.concat([PNG, Buffer.from([0x80, 0xbf, 0xc3, 0x28, 0xff, 0xfe, 0x00, 0xe9])]);

it('takes a multipart file part without a file name as the file, named "upload", its bytes as sent', async () => {
  const res = await postMultipart([
    { disposition: 'form-data; name="width"', content: '64' },
    { disposition: 'form-data; name="file"', type: 'image/png', content: NOT_TEXT },
  ]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ filename: 'upload', type: 'image', mime_type: 'image/png', size: NOT_TEXT.length, width: 64 });
  const served = await download(res.body.url);
  expect((served.body as Buffer).equals(NOT_TEXT)).toBe(true);
});

it('takes a text part named file (no file name, no content type) as the file, typed text/plain as multipart parts default to', async () => {
  const res = await postMultipart([{ disposition: 'form-data; name="file"', content: 'just text' }]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ filename: 'upload', mime_type: 'text/plain', size: 9 });
  expect(((await download(res.body.url)).body as Buffer).toString('utf8')).toBe('just text');
  // Bytes that are not UTF-8 come back as sent, not as replacement characters.
  const binary = await postMultipart([{ disposition: 'form-data; name="file"', content: NOT_TEXT }]);
  expect(binary.status, JSON.stringify(binary.body)).toBe(200);
  expect(binary.body.size).toBe(NOT_TEXT.length);
  expect(((await download(binary.body.url)).body as Buffer).equals(NOT_TEXT)).toBe(true);
});

it('stores the text of a file part without a file name that names its charset in UTF-8', async () => {
  const res = await postMultipart([{ disposition: 'form-data; name="file"', type: 'text/plain; charset=utf-8', content: 'héllo, 世界' }]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(((await download(res.body.url)).body as Buffer).toString('utf8')).toBe('héllo, 世界');
  const latin1 = await postMultipart([{ disposition: 'form-data; name="file"', type: 'text/plain; charset=iso-8859-1', content: Buffer.from('héllo', 'latin1') }]);
  expect(latin1.status, JSON.stringify(latin1.body)).toBe(200);
  expect(((await download(latin1.body.url)).body as Buffer).toString('utf8')).toBe('héllo');
});

it('takes a file part without a file name over 1MB whole', async () => {
  const big = Buffer.alloc(3 * MB + 5, 0xe9);
  const res = await postMultipart([{ disposition: 'form-data; name="file"', type: 'video/mp4', content: big }]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.size).toBe(big.length);
  expect(((await download(res.body.url)).body as Buffer).equals(big)).toBe(true);
});

it('refuses two parts named file, with or without a file name, with 422 naming file', async () => {
  const twoPlain = await postMultipart([
    { disposition: 'form-data; name="file"', content: 'a' },
    { disposition: 'form-data; name="file"', content: 'b' },
  ]);
  expect(fields(expectError(twoPlain, 422, 'invalid_params'))).toEqual(['file']);
  const mixed = await postMultipart([
    { disposition: 'form-data; name="file"', content: 'a' },
    { disposition: 'form-data; name="file"; filename="b.png"', type: 'image/png', content: PNG },
  ]);
  expect(fields(expectError(mixed, 422, 'invalid_params'))).toEqual(['file']);
  expect(stateOf(t.emulator).files).toEqual([]);
});

it('refuses two multipart file parts with 422 naming file', async () => {
  const res = await t.api.send((r) =>
    r
      .post('/v1/files')
      .set(bearer)
      .attach('file', PNG, { filename: 'a.png', contentType: 'image/png' })
      .attach('other', PNG, { filename: 'b.png', contentType: 'image/png' }),
  );
  expect(fields(expectError(res, 422, 'invalid_params'))).toEqual(['file']);
  expect(stateOf(t.emulator).files).toEqual([]);
});

it('refuses a multipart duration that is not a number, naming duration', async () => {
  const res = await t.api.send((r) =>
    r
      .post('/v1/files')
      .set(bearer)
      .field('duration', 'long')
      .attach('file', MP3, { filename: 'speech.mp3', contentType: 'audio/mpeg' }),
  );
  expect(fields(expectError(res, 422, 'invalid_params'))).toEqual(['duration']);
});

it('refuses a multipart file over 50MB with 413 payload_too_large and stores nothing', async () => {
  const huge = Buffer.alloc(50 * MB + 1, 0x41);
  const res = await t.api.send((r) =>
    r.post('/v1/files').set(bearer).attach('file', huge, { filename: 'huge.mp4', contentType: 'video/mp4' }),
  );
  expectError(res, 413, 'payload_too_large');
  expect(stateOf(t.emulator).files).toEqual([]);
});

it('accepts a multipart file of exactly 50MB', async () => {
  const limit = Buffer.alloc(50 * MB, 0x42);
  const res = await t.api.send((r) =>
    r.post('/v1/files').set(bearer).attach('file', limit, { filename: 'limit.mp4', contentType: 'video/mp4' }),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.size).toBe(50 * MB);
});

it('refuses JSON content over 50MB once decoded with 413 payload_too_large', async () => {
  const content = Buffer.alloc(50 * MB + 3, 0x41).toString('base64');
  const res = await t.api.post('/v1/files', { content, filename: 'huge.mp4' });
  expectError(res, 413, 'payload_too_large');
  expect(stateOf(t.emulator).files).toEqual([]);
});

it.each([
  ['characters outside the alphabet', 'not base64!'],
  ['padding in the middle', 'QQ==QQ=='],
  ['three padding characters', 'QQ==='],
  ['URL-safe characters', 'a-b_'],
  ['a dangling single character (length 4n+1)', 'QUJDR'],
])('refuses content with %s as 422 invalid_params naming content', async (_name, content) => {
  const res = await t.api.post('/v1/files', { content, filename: 'a.txt' });
  // A string can break both the alphabet and the length rule: one detail each, all on content.
  expect([...new Set(fields(expectError(res, 422, 'invalid_params')))]).toEqual(['content']);
  expect(stateOf(t.emulator).files).toEqual([]);
});

it.each([
  ['no content', { filename: 'a.png' }, 'content'],
  ['content that is not a string', { content: 12, filename: 'a.png' }, 'content'],
  ['a malformed mime_type', { content: 'QUJD', mime_type: 'png' }, 'mime_type'],
  ['a negative duration', { content: 'QUJD', duration: -1 }, 'duration'],
  ['a fractional width', { content: 'QUJD', width: 1.5 }, 'width'],
])('refuses a JSON upload with %s as 422 invalid_params naming the field', async (_name, body, field) => {
  const res = await t.api.post('/v1/files', body);
  const details = expectError(res, 422, 'invalid_params');
  expect(fields(details)).toContain(field);
});

type Agent = ReturnType<typeof request>;
it.each([
  ['JSON', (r: Agent) => r.post('/v1/files').send({ content: 'QUJD', filename: 'a.txt' })],
  ['multipart', (r: Agent) => r.post('/v1/files').attach('file', PNG, { filename: 'a.png' })],
  ['JSON with a wrong key', (r: Agent) => r.post('/v1/files').set({ Authorization: 'Bearer sk-no' }).send({ content: 'QUJD' })],
])('refuses a %s upload without a valid key with 401 invalid_api_key', async (_name, build) => {
  const res = await t.api.send(build);
  expectError(res, 401, 'invalid_api_key');
  expect(stateOf(t.emulator).files).toEqual([]);
});

it('refuses an upload that is neither JSON nor multipart with 415', async () => {
  const res = await t.api.send((r) => r.post('/v1/files').set(bearer).set('Content-Type', 'text/plain').send('QUJD'));
  expectError(res, 415, 'unsupported_media_type');
});

it('answers an unknown file address with 404 not_found in the general error shape', async () => {
  const res = await t.api.send((r) => r.get('/files/doesnotexist.png'));
  expect(res.status).toBe(404);
  expect(res.body).toEqual({
    error: { code: 'not_found', message: expect.any(String), request_id: res.headers['x-request-id'] },
  });
});

// --- File parameters of tasks ----------------------------------------------------------------------------------

it('accepts an avatar-photo task whose image and audio are uploaded files, by id or by address', async () => {
  const image = await uploadJson(PNG, { filename: 'face.png', width: 600, height: 800 });
  const audio = await uploadJson(MP3, { filename: 'speech.mp3', duration: 7.2 });
  const byId = await t.api.post('/v1/tasks', avatar({ image: image.id, audio: audio.id }));
  expect(byId.status, JSON.stringify(byId.body)).toBe(200);
  expect(byId.body.input).toEqual({ image: image.id, drive: 'audio', audio: audio.id, quality: 'standard' });
  const byUrl = await t.api.post('/v1/tasks', avatar({ image: image.url, audio: audio.url }));
  expect(byUrl.status, JSON.stringify(byUrl.body)).toBe(200);
  expect(byUrl.body.input).toMatchObject({ image: image.url, audio: audio.url });
});

it('accepts a public https address for a file parameter', async () => {
  const res = await t.api.post(
    '/v1/tasks',
    avatar({ image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' }),
  );
  expect(res.body.input).toMatchObject({ image: 'https://cdn.example.com/p.jpg' });
  expect(res.status).toBe(200);
});

it('refuses an audio file where an image is expected, naming input.image', async () => {
  const audio = await uploadJson(MP3, { filename: 'speech.mp3', duration: 5 });
  const details = await refusedTask(avatar({ image: audio.id, audio: audio.id }));
  expect(details).toEqual([{ field: 'input.image', message: 'must be an image file (is audio)' }]);
});

it('names the field as the caller spelled it when input is sent as params', async () => {
  const audio = await uploadJson(MP3, { filename: 'speech.mp3' });
  const details = await refusedTask({ model: 'avatar-photo', params: { image: audio.url, audio: audio.url } });
  expect(fields(details)).toEqual(['params.image']);
});

it.each([
  ['a file id that does not exist', (): string => 'file_999999'],
  ['an emulator address that does not exist', (): string => `${PUBLIC_URL}/files/AAAAAAAAAAAAAAAAAAAAAAAA.png`],
  ['a plain http address', (): string => 'http://cdn.example.com/p.png'],
  ['an http files address of another host', (): string => 'http://127.0.0.2:4010/files/abc.png'],
])('refuses %s as the image, naming input.image', async (_name, image) => {
  const audio = await uploadJson(MP3, { filename: 'speech.mp3' });
  const details = await refusedTask(avatar({ image: image(), audio: audio.id }));
  expect(fields(details)).toEqual(['input.image']);
});

it('refuses a file uploaded by another account, by id and by address, naming the field', async () => {
  const other = await newAccount(t);
  const theirs = await uploadJson(MP3, { filename: 'speech.mp3' }, t.as(other.key));
  const image = await uploadJson(PNG, { filename: 'face.png' });
  expect(fields(await refusedTask(avatar({ image: image.id, audio: theirs.id })))).toEqual(['input.audio']);
  expect(fields(await refusedTask(avatar({ image: image.id, audio: theirs.url })))).toEqual(['input.audio']);
  // The owner may use it.
  const theirImage = await uploadJson(PNG, { filename: 'face.png' }, t.as(other.key));
  const ok = await t.as(other.key).post('/v1/tasks', avatar({ image: theirImage.id, audio: theirs.id }));
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
});

it('refuses an image over 10MB for avatar-photo, naming input.image', async () => {
  const big = Buffer.alloc(10 * MB + 1, 1);
  const res = await t.api.send((r) =>
    r.post('/v1/files').set(bearer).attach('file', big, { filename: 'big.png', contentType: 'image/png' }),
  );
  expect(res.status).toBe(200);
  expect(res.body.size).toBe(10 * MB + 1);
  const details = await refusedTask(avatar({ image: res.body.id, audio: 'https://cdn.example.com/a.mp3' }));
  expect(details).toEqual([{ field: 'input.image', message: expect.stringMatching(/10MB/) }]);
});

it('checks the length of a reference voice only where it was declared', async () => {
  const image = await uploadJson(PNG, { filename: 'face.png' });
  const short = await uploadJson(MP3, { filename: 'voice.mp3', duration: 3 });
  const unknown = await uploadJson(MP3, { filename: 'voice.mp3' });
  const text = (voice: string): Record<string, unknown> =>
    avatar({ image: image.id, drive: 'text', content: 'Hello there', voice_audio: voice });
  const details = await refusedTask(text(short.id));
  expect(details).toEqual([{ field: 'input.voice_audio', message: 'must be at least 5 seconds long' }]);
  const res = await t.api.post('/v1/tasks', text(unknown.id));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});

it('accepts reference videos in MP4 or MOV within 2 to 15 seconds each and 15 in total', async () => {
  const mp4 = await uploadJson(MP4, { filename: 'a.mp4', duration: 6 });
  const mov = await uploadJson(MP4, { filename: 'b.mov', duration: 9 });
  const res = await t.api.post('/v1/tasks', videoRef([mp4.id, mov.url]));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.input.videos).toEqual([mp4.id, mov.url]);
});

it('refuses a reference video longer than 15 seconds, naming input.videos[0]', async () => {
  const long = await uploadJson(MP4, { filename: 'long.mp4', mime_type: 'video/mp4', duration: 16 });
  const details = await refusedTask(videoRef([long.id]));
  expect(details).toContainEqual({ field: 'input.videos[0]', message: 'must be at most 15 seconds long' });
  // The one video is also over the 15-second total; that rule may be reported too, but on input.videos only.
  expect(fields(details).every((f) => f === 'input.videos[0]' || f === 'input.videos')).toBe(true);
});

it('refuses a reference video shorter than 2 seconds, naming its index', async () => {
  const ok = await uploadJson(MP4, { filename: 'ok.mp4', duration: 5 });
  const short = await uploadJson(MP4, { filename: 'short.mp4', duration: 1.5 });
  const details = await refusedTask(videoRef([ok.id, short.id]));
  expect(details).toEqual([{ field: 'input.videos[1]', message: expect.stringMatching(/2 seconds/) }]);
});

it('refuses reference videos over 15 seconds in total, naming input.videos', async () => {
  const a = await uploadJson(MP4, { filename: 'a.mp4', duration: 8 });
  const b = await uploadJson(MP4, { filename: 'b.mp4', duration: 8 });
  const details = await refusedTask(videoRef([a.id, b.id]));
  expect(details).toEqual([{ field: 'input.videos', message: expect.stringMatching(/15 seconds \(has 16\)/) }]);
});

it('refuses a WebM reference video (MP4 or MOV only), naming input.videos[0]', async () => {
  const webm = await uploadJson(MP4, { filename: 'clip.webm', duration: 5 });
  expect(webm.mime_type).toBe('video/webm');
  const details = await refusedTask(videoRef([webm.id]));
  expect(details).toEqual([
    { field: 'input.videos[0]', message: 'must be one of video/mp4, video/quicktime (is video/webm)' },
  ]);
});

it('refuses an image where a reference video is expected', async () => {
  const image = await uploadJson(PNG, { filename: 'face.png' });
  const details = await refusedTask(videoRef([image.id]));
  expect(details).toEqual([{ field: 'input.videos[0]', message: expect.stringMatching(/video file \(is image\)/) }]);
});

// --- Expiry on the clock -----------------------------------------------------------------------------------------

it('serves an uploaded file until its retention ends, then answers 404 and refuses it in tasks', async () => {
  await t.close();
  t = await startEmulator({ fileRetentionSeconds: 3600 });
  const image = await uploadJson(PNG, { filename: 'face.png' });
  expect(image.expires_at).toBe('2026-11-23T10:00:00+08:00');

  await advance(3599);
  expect((await download(image.url)).status).toBe(200);
  const before = await t.api.post('/v1/tasks', avatar({ image: image.id, audio: 'https://cdn.example.com/a.mp3' }));
  expect(before.status).toBe(200);

  await advance(1);
  const gone = await t.api.send((r) => r.get(new URL(image.url).pathname));
  expect(gone.status).toBe(404);
  expect(gone.body).toEqual({
    error: { code: 'not_found', message: expect.any(String), request_id: gone.headers['x-request-id'] },
  });
  expect(gone.headers['x-request-id']).toMatch(/^req_[a-z0-9]{24}$/);

  for (const address of [image.id, image.url]) {
    const res = await t.api.post('/v1/tasks', avatar({ image: address, audio: 'https://cdn.example.com/a.mp3' }));
    expect(fields(expectError(res, 422, 'invalid_params'))).toEqual(['input.image']);
  }
});

// --- Result files ---------------------------------------------------------------------------------------------------

const INSTANT = { 'X-Emulator-Scenario': 'instant' };

/** A video-gen-2.0-fast task on the instant scenario, run by a 0-second advance (it is due now, not yet run). */
async function finishedVideo(input: Record<string, unknown>): Promise<{ output: { files: Record<string, unknown>[] } }> {
  const submitted = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input }, INSTANT);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  expect(submitted.body.status).toBe('queued');
  await advance(0);
  const task = await t.api.get(`/v1/tasks/${submitted.body.id}`);
  expect(task.body.status).toBe('succeeded');
  return task.body;
}

it('stores the result video of a succeeded task, downloadable as MP4 of its size, with a JPEG cover', async () => {
  const task = await finishedVideo({ prompt: 'a cat surfing' });
  const [file] = task.output.files;
  expect(task.output.files).toHaveLength(1);
  expect(file).toEqual({
    type: 'video',
    mime_type: 'video/mp4',
    width: 1280,
    height: 720,
    duration: 5,
    size: expect.any(Number),
    url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:4010\/files\/[A-Za-z0-9]+\.mp4$/),
    cover_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:4010\/files\/[A-Za-z0-9]+\.jpg$/),
    expires_at: '2026-11-30T09:00:00+08:00',
  });

  const video = await download(String(file?.['url']));
  expect(video.status).toBe(200);
  expect(video.headers['content-type']).toMatch(/^video\/mp4/);
  const bytes = video.body as Buffer;
  expect(bytes.length).toBe(file?.['size']);
  expect(bytes.length).toBeGreaterThan(8);
  expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');

  const cover = await download(String(file?.['cover_url']));
  expect(cover.status).toBe(200);
  expect(cover.headers['content-type']).toMatch(/^image\/jpeg/);
  expect([...(cover.body as Buffer).subarray(0, 2)]).toEqual([0xff, 0xd8]);
});

it.each([
  ['9:16', '1080p', 1080, 1920],
  ['1:1', '480p', 480, 480],
  ['21:9', '720p', 1680, 720],
])('sizes a %s %s result video %ix%i', async (ratio, resolution, width, height) => {
  const task = await finishedVideo({ prompt: 'p', ratio, resolution, duration: 8 });
  expect(task.output.files[0]).toMatchObject({ width, height, duration: 8 });
});

it('sizes an avatar-photo result by the uploaded photo, times it and charges by the uploaded audio', async () => {
  const image = await uploadJson(PNG, { filename: 'face.png', width: 600, height: 800 });
  const audio = await uploadJson(MP3, { filename: 'speech.mp3', duration: 7.2 });
  const submitted = await t.api.post('/v1/tasks', avatar({ image: image.id, audio: audio.url }), INSTANT);
  expect(submitted.status).toBe(200);
  expect(submitted.body.points.frozen).toBe('60.000');
  await advance(0);
  const task = (await t.api.get(`/v1/tasks/${submitted.body.id}`)).body;
  expect(task.status).toBe('succeeded');
  expect(task.output.files[0]).toMatchObject({ type: 'video', width: 600, height: 800, duration: 7.2 });
  expect(task.points).toEqual({ frozen: '60.000', charged: '48.000', refunded: '12.000' });
});

it('expires result files with the retention too', async () => {
  await t.close();
  t = await startEmulator({ fileRetentionSeconds: 3600 });
  const task = await finishedVideo({ prompt: 'p' });
  const file = task.output.files[0] ?? {};
  expect(file['expires_at']).toBe('2026-11-23T10:00:00+08:00');
  await advance(3599);
  expect((await download(String(file['url']))).status).toBe(200);
  await advance(1);
  expect((await download(String(file['url']))).status).toBe(404);
  expect((await download(String(file['cover_url']))).status).toBe(404);
});
