import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { recordsBesideCalls, stateOf } from '../support/state.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator({ bodyLimit: '16kb' });
});
afterEach(() => t.close());

const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const bearer = { Authorization: `Bearer ${DEMO_KEY}` };

it('gives every answer its own X-Request-Id, equal to error.request_id on errors', async () => {
  const ok = await t.api.get('/v1/tasks');
  const missing = await t.api.get('/v1/tasks/nope');
  const unknownPath = await t.api.get('/v1/nowhere');
  for (const res of [ok, missing, unknownPath]) expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(missing.body.error.request_id).toBe(missing.headers['x-request-id']);
  expect(unknownPath.status).toBe(404);
  expect(unknownPath.body.error).toMatchObject({ code: 'not_found', request_id: unknownPath.headers['x-request-id'] });
  expect(new Set([ok, missing, unknownPath].map((r) => r.headers['x-request-id'])).size).toBe(3);
});

it.each([
  ['no Authorization header', {}],
  ['an unknown key', { Authorization: 'Bearer sk-not-a-key' }],
  ['a non-bearer scheme', { Authorization: `Basic ${DEMO_KEY}` }],
  ['x-api-key outside /v1/messages', { 'x-api-key': DEMO_KEY }],
])('refuses %s with 401 invalid_api_key', async (_name, headers) => {
  const res = await t.api.send((r) => r.get('/v1/tasks').set(headers));
  expect(res.status).toBe(401);
  expect(res.body.error).toMatchObject({ code: 'invalid_api_key', request_id: res.headers['x-request-id'] });
});

it('checks the key before anything else: a bad key with a bad body is 401', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/tasks').set('Authorization', 'Bearer sk-wrong').set('Content-Type', 'application/json').send('{oops'),
  );
  expect(res.status).toBe(401);
});

it('answers 401 on unknown /v1 paths without a key, in the error shape of the group', async () => {
  const general = await t.api.send((r) => r.get('/v1/unknown'));
  expect(general.body).toEqual({
    error: { code: 'invalid_api_key', message: expect.any(String), request_id: general.headers['x-request-id'] },
  });
});

it.each([
  ['/v1/chat/completions', 'openai'],
  ['/v1/responses', 'openai'],
  ['/v1/messages', 'messages'],
  ['/v1/tasks', 'general'],
])('writes a 401 on %s in the %s error shape', async (path, shape) => {
  const res = await t.api.send((r) => r.post(path).set('Authorization', 'Bearer sk-wrong').send({}));
  expect(res.status).toBe(401);
  const requestId = res.headers['x-request-id'];
  if (shape === 'openai') {
    expect(res.body).toEqual({
      error: { message: expect.any(String), type: 'invalid_api_key', code: 'invalid_api_key', param: null, request_id: requestId },
    });
  } else if (shape === 'messages') {
    expect(res.body).toEqual({
      type: 'error',
      error: { type: 'invalid_api_key', message: expect.any(String), code: 'invalid_api_key', request_id: requestId },
    });
  } else {
    expect(res.body).toEqual({ error: { code: 'invalid_api_key', message: expect.any(String), request_id: requestId } });
  }
});

it('accepts x-api-key on /v1/messages (past authentication to the next check)', async () => {
  const res = await t.api.send((r) => r.post('/v1/messages').set('x-api-key', DEMO_KEY).send({}));
  expect(res.status).not.toBe(401);
  expect(res.body.type).toBe('error');
});

it('answers malformed JSON with 400 bad_request', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/tasks').set(bearer).set('Content-Type', 'application/json').send('{"model": "social-notes-data",'),
  );
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'bad_request', request_id: res.headers['x-request-id'] });
});

it.each([
  ['an array', '[1,2]'],
  ['a string', '"hello"'],
  ['a number', '42'],
  ['null', 'null'],
])('answers a body that is %s with 400 bad_request', async (_name, raw) => {
  const res = await t.api.send((r) => r.post('/v1/tasks').set(bearer).set('Content-Type', 'application/json').send(raw));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('bad_request');
});

it('answers a submit with no body with 400 bad_request', async () => {
  const res = await t.api.send((r) => r.post('/v1/tasks').set(bearer));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('bad_request');
});

it('answers a form-encoded body on the tasks endpoint with 415 unsupported_media_type', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/tasks').set(bearer).set('Content-Type', 'application/x-www-form-urlencoded').send('model=social-notes-data'),
  );
  expect(res.status).toBe(415);
  expect(res.body.error.code).toBe('unsupported_media_type');
});

it('answers a text/plain body on a text endpoint with 400 bad_request in the text error shape', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/chat/completions').set(bearer).set('Content-Type', 'text/plain').send('hello'),
  );
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'bad_request', type: 'bad_request', param: null });
});

it('answers an oversized body with 413 payload_too_large, and keeps serving', async () => {
  const res = await t.api.post('/v1/tasks', { ...socialNote(), metadata: { big: 'x'.repeat(20_000) } });
  expect(res.status).toBe(413);
  expect(res.body.error.code).toBe('payload_too_large');
  expect((await t.api.post('/v1/tasks', socialNote())).status).toBe(200);
});

it('accepts application/json with a charset', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/tasks').set(bearer).set('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(socialNote())),
  );
  expect(res.status).toBe(200);
});

it('leaves the store untouched by refused requests, but for their call records', async () => {
  await t.api.post('/v1/tasks', socialNote());
  const withoutCalls = (): string => recordsBesideCalls(t.emulator);
  const before = withoutCalls();
  const callsBefore = stateOf(t.emulator).calls.length;
  await t.api.send((r) => r.post('/v1/tasks').set(bearer).set('Content-Type', 'application/json').send('{bad'));
  await t.api.post('/v1/tasks', { model: 'social-notes-data', input: { mode: 'search', agree: true } });
  await t.api.post('/v1/tasks', { model: 'nope', input: {} });
  await t.api.send((r) => r.post('/v1/tasks').set('Authorization', 'Bearer sk-bad').send(socialNote()));
  expect(withoutCalls()).toBe(before);
  expect(stateOf(t.emulator).calls.length).toBe(callsBefore + 4);
});
