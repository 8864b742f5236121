import request from 'supertest';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { loadDocument } from '../../src/contract/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// A wrong method on a path the service has is 405 method_not_allowed with an Allow header naming the path's
// methods (those of openapi/service.yaml and admin.yaml), in the error shape of the path's group; a path it does
// not have is 404 not_found, named whole in the message.
// @see reference "Errors" → "Body formats"; RFC 9110 §15.5.6 (405 carries Allow)

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const bearer = { Authorization: `Bearer ${DEMO_KEY}` };
const adminBearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'HEAD';
const VERBS: Verb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Any method, by hand (supertest has no generic one); answers are not checked against the documents here. */
function send(method: Verb, path: string, headers: Record<string, string>): request.Test {
  const agent = request(t.emulator.app);
  const verb = method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options' | 'head';
  return agent[verb](path).set(headers);
}

const authFor = (path: string): Record<string, string> => (path.startsWith('/_emulator') ? adminBearer : bearer);

it('answers GET on /v1/tasks/{id}/cancel with 405 method_not_allowed and Allow: POST', async () => {
  const res = await t.api.get('/v1/tasks/T202611230900000ABCDEF/cancel');
  expect(res.status).toBe(405);
  expect(res.headers['allow']).toBe('POST');
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(res.body).toEqual({
    error: { code: 'method_not_allowed', message: expect.stringContaining('/v1/tasks/T202611230900000ABCDEF/cancel'), request_id: res.headers['x-request-id'] },
  });
});

it('answers DELETE on /v1/tasks with 405 and Allow: GET, POST', async () => {
  const res = await t.api.send((r) => r.delete('/v1/tasks').set(bearer));
  expect(res.status).toBe(405);
  expect(res.headers['allow']).toBe('GET, POST');
  expect(res.body.error).toMatchObject({ code: 'method_not_allowed', request_id: res.headers['x-request-id'] });
});

it.each([
  ['/v1/chat/completions', 'openai'],
  ['/v1/responses', 'openai'],
  ['/v1/messages', 'messages'],
])('answers GET on %s with 405 and Allow: POST in the %s error shape', async (path, shape) => {
  const res = await t.api.get(path);
  expect(res.status).toBe(405);
  expect(res.headers['allow']).toBe('POST');
  const requestId = res.headers['x-request-id'];
  expect(requestId).toMatch(REQUEST_ID);
  if (shape === 'openai') {
    expect(res.body).toEqual({
      error: { message: expect.any(String), type: 'method_not_allowed', code: 'method_not_allowed', param: null, request_id: requestId },
    });
  } else {
    expect(res.headers['request-id']).toBe(requestId);
    expect(res.body).toEqual({
      type: 'error',
      error: { type: 'method_not_allowed', message: expect.any(String), code: 'method_not_allowed', request_id: requestId },
    });
  }
});

it.each([
  ['PUT', '/_emulator/accounts/acct_demo', 'GET, PATCH'],
  ['DELETE', '/_emulator/accounts/acct_demo', 'GET, PATCH'],
  ['DELETE', '/_emulator/accounts', 'GET, POST'],
  ['POST', '/_emulator/health', 'GET'],
  ['GET', '/_emulator/reset', 'POST'],
  ['DELETE', '/_emulator/keys/sk-emulator-demo', 'GET, PATCH'],
  ['GET', '/_emulator/tasks/T1/cancel', 'POST'],
] as const)('answers %s %s on the control API with 405 and Allow: %s', async (method, path, allow) => {
  const res = await t.admin.send(() => send(method, path, adminBearer));
  expect(res.status).toBe(405);
  expect(res.headers['allow']).toBe(allow);
  expect(res.body).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String), request_id: res.headers['x-request-id'] } });
});

it.each([
  ['/v1/tasks', 'GET, POST', bearer],
  ['/v1/tasks/T1', 'GET', bearer],
  ['/_emulator/accounts/acct_demo', 'GET, PATCH', adminBearer],
  ['/_emulator/health', 'GET', adminBearer],
])('answers OPTIONS %s with 405 and the whole Allow (%s), in the error shape', async (path, allow, headers) => {
  const res = await send('OPTIONS', path, headers);
  expect(res.status).toBe(405);
  expect(res.headers['allow']).toBe(allow);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error).toMatchObject({ code: 'method_not_allowed', request_id: res.headers['x-request-id'] });
});

it('answers HEAD on a POST-only path with 405 and Allow, without a body; HEAD on a GET path is served', async () => {
  const refused = await send('HEAD', '/v1/tasks/T1/cancel', bearer);
  expect(refused.status).toBe(405);
  expect(refused.headers['allow']).toBe('POST');
  expect(refused.headers['x-request-id']).toMatch(REQUEST_ID);
  expect((await send('HEAD', '/v1/tasks', bearer)).status).toBe(200);
});

it('checks the key (and the admin token) before the method: a wrong method without one is 401', async () => {
  const v1 = await send('DELETE', '/v1/tasks', {});
  expect(v1.status).toBe(401);
  expect(v1.body.error.code).toBe('invalid_api_key');
  for (const method of ['DELETE', 'OPTIONS'] as const) {
    const admin = await send(method, '/_emulator/accounts', {});
    expect(admin.status).toBe(401);
    expect(admin.body.error.code).toBe('unauthorized');
  }
});

it('answers a wrong method on a path whose parameter is not valid percent-encoding with 404, as the right method is', async () => {
  for (const method of ['GET', 'POST'] as const) {
    const res = await send(method, '/v1/tasks/%ZZ/cancel', bearer);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  }
});

it('keeps paths exact: a wrong method on a case variant or with a trailing slash is 404, not 405', async () => {
  for (const path of ['/v1/Tasks', '/v1/tasks/', '/v1/tasks/T1/cancel/', '/_emulator/Accounts']) {
    const res = await send('DELETE', path, authFor(path));
    expect(res.status, path).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect(res.headers['allow']).toBeUndefined();
  }
});

it.each([
  ['POST', '/v1/tasks/x/y'],
  ['GET', '/v1/nowhere'],
  ['GET', '/v1'],
  ['GET', '/v1/chat/completions/extra'],
  ['GET', '/_emulator/nowhere'],
  ['PUT', '/_emulator/accounts/a/b'],
  ['GET', '/nowhere'],
] as const)('names the whole path of an unknown route: %s %s', async (method, path) => {
  const res = await send(method, path, authFor(path));
  expect(res.status).toBe(404);
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(res.body.error).toMatchObject({ code: 'not_found', message: `No route for ${method} ${path}.` });
});

it('names the path without its query, in 404 and 405 messages alike', async () => {
  const unknown = await send('GET', '/v1/tasks/x/y?limit=2', bearer);
  expect(unknown.body.error.message).toBe('No route for GET /v1/tasks/x/y.');
  const wrongMethod = await send('POST', '/v1/tasks/x?limit=2', bearer);
  expect(wrongMethod.status).toBe(405);
  expect(wrongMethod.body.error.message).toBe('POST is not a method of /v1/tasks/x; it takes GET.');
});

// Every path of the documents with every method: the documented ones are routed (never the no-route answer), the
// others are 405 with the documented methods as Allow. This holds the routers and the documents to each other.
const DOCUMENTED = (['service', 'admin'] as const).flatMap((name) =>
  Object.entries(loadDocument(name).paths ?? {}).map(([template, item]) => {
    const methods = VERBS.filter((verb) => (item as Record<string, unknown>)[verb.toLowerCase()] !== undefined);
    return [template, methods] as const;
  }),
);

it.each(DOCUMENTED)('routes %s for exactly its documented methods %j', async (template, methods) => {
  const path = template.replace(/\{[^}]+\}/g, 'x1');
  const allow = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => (methods as readonly string[]).includes(m)).join(', ');
  for (const method of VERBS) {
    const res = await send(method, path, authFor(path));
    const what = `${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`;
    if ((methods as readonly string[]).includes(method)) {
      expect(res.status, what).not.toBe(405);
      expect(String(res.body?.error?.message ?? ''), what).not.toMatch(/^No route/);
    } else {
      expect(res.status, what).toBe(405);
      expect(res.headers['allow'], what).toBe(allow);
    }
  }
});
