import { readFileSync } from 'node:fs';
import request from 'supertest';
import { parse } from 'yaml';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// Bad input the fuzz suite (test/fuzz/bad-input.fuzz.ts) found answered wrongly, one regression test each,
// over HTTP against the real app; every answer is also checked against the OpenAPI documents by the harness.

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const bearer = { Authorization: `Bearer ${DEMO_KEY}` };
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const REQUEST_ID = /^req_[a-z0-9]{24}$/;

// ---------------------------------------------------------------------------------------------------------------
// Paths are exact

it.each([
  ['a case variant of /v1/tasks', 'GET', '/v1/taskS'],
  ['/v1/tasks with a trailing slash', 'GET', '/v1/tasks/'],
  ['an upper-case /V1 prefix', 'GET', '/V1/tasks'],
  ['a case variant of /v1/models', 'GET', '/v1/Models'],
  ['/v1/pricing with a trailing slash', 'GET', '/v1/pricing/'],
  ['a case variant of POST /v1/files', 'POST', '/v1/Files'],
])('answers %s with 404 not_found in the general shape', async (_name, method, path) => {
  const res = await t.api.send((r) => (method === 'GET' ? r.get(path) : r.post(path)).set(bearer));
  expect(res.status).toBe(404);
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String), request_id: res.headers['x-request-id'] } });
});

it('answers a task path with a trailing slash with 404, not the task', async () => {
  const task = await t.api.post('/v1/tasks', socialNote());
  const slashed = await t.api.send((r) => r.get(`/v1/tasks/${task.body.id}/`).set(bearer));
  expect(slashed.status).toBe(404);
  expect(slashed.body.error.code).toBe('not_found');
  const canceled = await t.api.send((r) => r.post(`/v1/tasks/${task.body.id}/Cancel`).set(bearer));
  expect(canceled.status).toBe(404);
  expect((await t.api.get(`/v1/tasks/${task.body.id}`)).body.status).toBe('queued');
});

it.each([
  ['/v1/Chat/completions', 'a case variant of the chat path'],
  ['/v1/chat/completions/', 'the chat path with a trailing slash'],
  ['/v1/Messages', 'a case variant of the messages path'],
])('answers POST %s (%s) with 404, never a text answer', async (path) => {
  const res = await t.api.send((r) =>
    r.post(path).set(bearer).send({ model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
  );
  expect(res.status).toBe(404);
  expect(res.body.error).toMatchObject({ code: 'not_found', request_id: res.headers['x-request-id'] });
});

it.each([
  ['a case variant', '/_emulator/Clock'],
  ['a trailing slash', '/_emulator/clock/'],
  ['a case variant of a nested path', '/_emulator/webhooks/Deliveries'],
])('answers a control path with %s with 404 not_found', async (_name, path) => {
  const res = await t.admin.send((r) => r.get(path).set(admin));
  expect(res.status).toBe(404);
  expect(res.body.error).toMatchObject({ code: 'not_found', request_id: res.headers['x-request-id'] });
});

it('still serves the dashboard at /_emulator/ui with and without the trailing slash', async () => {
  // Not in admin.yaml (a page, not an operation): asked without the document check.
  for (const path of ['/_emulator/ui', '/_emulator/ui/']) {
    const res = await request(t.emulator.app).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  }
});

// ---------------------------------------------------------------------------------------------------------------
// multipart/form-data only on POST /v1/files

it('refuses a multipart body on POST /v1/tasks with 415 unsupported_media_type, creating nothing', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/tasks').set(bearer).field('model', 'social-notes-data').field('input', JSON.stringify(socialNote()['input'])),
  );
  expect(res.status).toBe(415);
  expect(res.body.error).toMatchObject({ code: 'unsupported_media_type', request_id: res.headers['x-request-id'] });
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
});

it.each([
  ['/v1/chat/completions', 'openai'],
  ['/v1/responses', 'openai'],
  ['/v1/messages', 'messages'],
])('refuses a multipart body on POST %s with 400 bad_request in the %s shape', async (path, shape) => {
  const res = await t.api.send((r) => r.post(path).set(bearer).field('model', 'svc-text-lite').field('input', 'Hi'));
  expect(res.status).toBe(400);
  const requestId = res.headers['x-request-id'];
  if (shape === 'openai') {
    expect(res.body).toEqual({ error: { message: expect.any(String), type: 'bad_request', code: 'bad_request', param: null, request_id: requestId } });
  } else {
    expect(res.body).toEqual({ type: 'error', error: { type: 'bad_request', message: expect.any(String), code: 'bad_request', request_id: requestId } });
  }
});

it('refuses a multipart body on a control endpoint with 415 unsupported_media_type', async () => {
  const res = await t.admin.send((r) => r.post('/_emulator/accounts').set(admin).field('points', '10.000'));
  expect(res.status).toBe(415);
  expect(res.body.error.code).toBe('unsupported_media_type');
});

it('still takes a multipart upload on POST /v1/files', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/files').set(bearer).attach('file', Buffer.from('not really a picture'), { filename: 'a.png', contentType: 'image/png' }),
  );
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ object: 'file', mime_type: 'image/png', size: 20 });
});

// ---------------------------------------------------------------------------------------------------------------
// The control API checks its token before it reads a body

it.each([
  ['malformed JSON', 'application/json', '{'],
  ['a wrong content type', 'text/plain', '{}'],
  ['a body over the 1 MB limit', 'application/json', `{"pad":"${'x'.repeat(1024 * 1024 + 16)}"}`],
])('refuses a control call without its token with 401 unauthorized, whatever the body: %s', async (_name, type, body) => {
  const res = await t.admin.send((r) => r.post('/_emulator/accounts').set('Content-Type', type).send(body));
  expect(res.status).toBe(401);
  expect(res.body.error).toMatchObject({ code: 'unauthorized', request_id: res.headers['x-request-id'] });
});

it('refuses an unknown control path without the token with 401, and with it with 404', async () => {
  const anonymous = await t.admin.send((r) => r.get('/_emulator/nope').set('Content-Type', 'application/json').send('{'));
  expect(anonymous.status).toBe(401);
  const known = await t.admin.send((r) => r.get('/_emulator/nope').set(admin));
  expect(known.status).toBe(404);
});

it('answers health without a token even when a body comes along', async () => {
  const res = await t.admin.send((r) => r.get('/_emulator/health').set('Content-Type', 'application/json').send('{'));
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('ok');
});

// ---------------------------------------------------------------------------------------------------------------
// File record overrides keep the task a valid Task

const documents = {
  service: parse(readFileSync(new URL('../../openapi/service.yaml', import.meta.url), 'utf8')) as Schemas,
  admin: parse(readFileSync(new URL('../../openapi/admin.yaml', import.meta.url), 'utf8')) as Schemas,
};
interface Schemas {
  components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
}

it('gives a file record override the rules of the same field of service.yaml FileRecord, field by field', () => {
  const record = documents.service.components.schemas['FileRecord']?.properties ?? {};
  const override = documents.admin.components.schemas['FileRecordOverride']?.properties ?? {};
  const time = documents.service.components.schemas['Time'];
  // The one reference in FileRecord, resolved: the override spells the service's Time out.
  const resolved = Object.fromEntries(Object.entries(record).map(([name, schema]) => [name, schema['$ref'] === '#/components/schemas/Time' ? time : schema]));
  expect(override).toEqual(resolved);
});

it('stores an added result file as a complete, served file record when only some of its fields are given', async () => {
  const task = await t.api.post('/v1/tasks', socialNote());
  const done = await t.admin.post(`/_emulator/tasks/${task.body.id}/complete`, { output: { files: [{ type: 'image', width: 64 }] } });
  expect(done.status).toBe(200);
  const [file] = done.body.output.files;
  expect(file).toMatchObject({ type: 'image', width: 64, height: 180, mime_type: 'video/mp4', url: expect.stringMatching(/^http:\/\/.+\/files\/\w+\.mp4$/) });
  // Served from the emulator's file storage (not an operation of service.yaml).
  const served = await request(t.emulator.app).get(new URL(file.url).pathname);
  expect(served.status).toBe(200);
  expect(served.headers['content-type']).toBe('video/mp4');
  // The task as the API shows it is a valid Task (the harness checks every answer against service.yaml).
  expect((await t.api.get(`/v1/tasks/${task.body.id}`)).body.output.files).toHaveLength(1);
});

it.each([
  ['an empty url', { url: '' }],
  ['a url that is no address', { url: 'not a uri' }],
  ['a cover_url of the wrong type', { cover_url: false }],
  ['an expiry that is no time', { expires_at: '5251-83-12T19:77:18+08:00' }],
  ['a negative size', { size: -1 }],
  ['a width of 0', { width: 0 }],
  ['a field file records do not have', { Hu: 'true' }],
])('refuses a file record override with %s with 422 invalid_params, leaving the task as it was', async (_name, fields) => {
  const task = await t.api.post('/v1/tasks', socialNote());
  const res = await t.admin.post(`/_emulator/tasks/${task.body.id}/complete`, { output: { files: [fields] } });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect((await t.api.get(`/v1/tasks/${task.body.id}`)).body.status).toBe('queued');
});

it('refuses a scenario whose output overrides a file record with a bad field', async () => {
  const res = await t.admin.post('/_emulator/scenarios', { scenarios: [{ name: 'bad-files', outcome: 'succeeded', output: { files: [{ url: '' }] } }] });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
});

// ---------------------------------------------------------------------------------------------------------------
// An unknown Content-Encoding

it.each([
  ['/v1/chat/completions', { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Hi' }] }],
  ['/v1/responses', { model: 'svc-text-lite', input: 'Hi' }],
  ['/v1/messages', { model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }],
])('refuses an unknown Content-Encoding on POST %s with 400 bad_request, as every content problem there', async (path, body) => {
  const res = await t.api.send((r) => r.post(path).set(bearer).set('Content-Type', 'application/json').set('Content-Encoding', 'x-unknown').send(JSON.stringify(body)));
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'bad_request', request_id: res.headers['x-request-id'] });
});

it('refuses an unknown Content-Encoding on POST /v1/tasks and on the control API with 415 unsupported_media_type', async () => {
  const task = await t.api.send((r) => r.post('/v1/tasks').set(bearer).set('Content-Type', 'application/json').set('Content-Encoding', 'compress').send(JSON.stringify(socialNote())));
  expect(task.status).toBe(415);
  expect(task.body.error.code).toBe('unsupported_media_type');
  const control = await t.admin.send((r) => r.post('/_emulator/accounts').set(admin).set('Content-Type', 'application/json').set('Content-Encoding', 'x-unknown').send('{}'));
  expect(control.status).toBe(415);
  expect(control.body.error.code).toBe('unsupported_media_type');
});

// ---------------------------------------------------------------------------------------------------------------
// Clock speed: a speed in range in a body nested past the limit

it('refuses a clock speed in a body nested past 64 levels with 400 bad_request, leaving the speed as it was', async () => {
  const real = await startEmulator({ clock: 'real', speed: 1 });
  try {
    const deep = '['.repeat(100) + ']'.repeat(100);
    const refused = await real.admin.send((r) => r.post('/_emulator/clock/speed').set(admin).set('Content-Type', 'application/json').send(`{"speed":2,"pad":${deep}}`));
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('bad_request');
    expect((await real.admin.get('/_emulator/clock')).body.speed).toBe(1);
    // The same speed with a shallow extra field is taken.
    expect((await real.admin.post('/_emulator/clock/speed', { speed: 2, pad: [[[]]] })).body.speed).toBe(2);
  } finally {
    await real.close();
  }
});
