import { afterEach, beforeEach, expect, it } from 'vitest';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// Every /v1 request leaves a call record, rejected ones included, found by its request id.

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

it('records a request refused by authentication, with no account', async () => {
  const res = await t.api.send((r) => r.get('/v1/tasks').set('Authorization', 'Bearer sk-wrong'));
  const id = res.headers['x-request-id'] as string;
  const record = await t.admin.get(`/_emulator/records/${id}`);
  expect(record.body).toEqual({
    request_id: id,
    at: '2026-11-23T09:00:00+08:00',
    key: null,
    account_id: null,
    method: 'GET',
    path: '/v1/tasks',
    status: 401,
    error_code: 'invalid_api_key',
    model: null,
    latency_ms: expect.any(Number),
    request_headers: expect.objectContaining({ authorization: '[redacted]' }),
    error_message: 'The API key is not valid.',
  });
});

it('records the query string, and the request headers with credentials and signatures masked', async () => {
  const res = await t.api.get('/v1/tasks?limit=2&status=queued&api_key=sk-leaked-in-query', {
    Cookie: 'session=abc',
    'X-Svc-Timestamp': '1700000000',
    'X-Svc-Nonce': 'n0nce',
    'X-Svc-Signature': 'c2lnbmF0dXJl',
    'X-Trace': 'trace-7',
  });
  const record = (await t.admin.get(`/_emulator/records/${res.headers['x-request-id']}`)).body;
  expect(record).toMatchObject({ path: '/v1/tasks', query: 'limit=2&status=queued&api_key=[redacted]' });
  expect(record.request_headers).toMatchObject({
    authorization: '[redacted]',
    cookie: '[redacted]',
    'x-svc-timestamp': '[redacted]',
    'x-svc-nonce': '[redacted]',
    'x-svc-signature': '[redacted]',
    'x-trace': 'trace-7',
  });
  // The key is the record's `key`, never a header's or the query's.
  expect(JSON.stringify([record.request_headers, record.query])).not.toContain('sk-');
  // A request without a query has none.
  const plain = await t.api.get('/v1/tasks');
  expect((await t.admin.get(`/_emulator/records/${plain.headers['x-request-id']}`)).body).not.toHaveProperty('query');
});

it('masks the x-api-key a Messages call carries', async () => {
  const res = await t.api.send((r) =>
    r.post('/v1/messages').set({ 'x-api-key': 'sk-emulator-demo', 'anthropic-version': '2023-06-01' }).send({ model: 'nope', max_tokens: 5, messages: [] }),
  );
  const record = (await t.admin.get(`/_emulator/records/${res.headers['x-request-id']}`)).body;
  expect(record.request_headers).toMatchObject({ 'x-api-key': '[redacted]', 'anthropic-version': '2023-06-01' });
  expect(record.key).toBe('sk-emulator-demo');
});

it('records an error answer with its message and the fields its details named', async () => {
  const bad = await t.api.post('/v1/tasks', { model: 'social-notes-data', input: {} });
  expect(bad.body.error.details.length).toBeGreaterThan(0);
  const record = (await t.admin.get(`/_emulator/records/${bad.headers['x-request-id']}`)).body;
  expect(record).toMatchObject({ status: 422, error_code: 'invalid_params', error_message: bad.body.error.message, error_details: bad.body.error.details });
  const ok = await t.api.post('/v1/tasks', socialNote());
  const fine = (await t.admin.get(`/_emulator/records/${ok.headers['x-request-id']}`)).body;
  expect(fine).not.toHaveProperty('error_message');
  expect(fine).not.toHaveProperty('error_details');
});

it.each([
  ['named by the X-Emulator-Scenario header', { 'X-Emulator-Scenario': 'slow' }, 'slow'],
  ['chosen by default', {}, 'default'],
])('records the scenario of a submission %s', async (_name, headers, scenario) => {
  const res = await t.api.post('/v1/tasks', socialNote(), headers);
  const record = (await t.admin.get(`/_emulator/records/${res.headers['x-request-id']}`)).body;
  expect(record).toMatchObject({ task_id: res.body.id, scenario });
  expect((await t.admin.get(`/_emulator/tasks/${res.body.id}`)).body.scenario).toBe(scenario);
});

it('reads a record stored before the newer fields, as it was stored', async () => {
  const old = {
    request_id: 'req_000000000000000000000001',
    at: '2026-11-23T09:00:00+08:00',
    key: null,
    account_id: null,
    method: 'GET',
    path: '/v1/models',
    status: 200,
    error_code: null,
    model: null,
    latency_ms: 1,
  };
  t.emulator.internals.db.store.transaction(() => t.emulator.internals.db.calls.put(old, Date.parse(old.at)));
  expect((await t.admin.get(`/_emulator/records/${old.request_id}`)).body).toEqual(old);
});

it('carries the newer fields through a state export and import', async () => {
  const bad = await t.api.post('/v1/tasks?x=1', { model: 'social-notes-data', input: {} }, { 'X-Emulator-Scenario': 'slow' });
  const ok = await t.api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'slow' });
  const exported = (await t.admin.post('/_emulator/state/export')).body;
  const records = [bad, ok].map((res) => exported.calls.find((c: { request_id: string }) => c.request_id === res.headers['x-request-id']));
  expect(records[0]).toMatchObject({ query: 'x=1', error_details: expect.any(Array), request_headers: expect.any(Object) });
  expect(records[1]).toMatchObject({ scenario: 'slow' });
  expect((await t.admin.post('/_emulator/state/import', exported)).status).toBe(200);
  for (const record of records) expect((await t.admin.get(`/_emulator/records/${record.request_id}`)).body).toEqual(record);
});

it('records accepted and refused submits with their account and status', async () => {
  const ok = await t.api.post('/v1/tasks', socialNote());
  const bad = await t.api.post('/v1/tasks', { model: 'social-notes-data', input: {} });
  expect((await t.admin.get(`/_emulator/records/${ok.headers['x-request-id']}`)).body).toMatchObject({
    key: 'sk-emulator-demo',
    account_id: 'acct_demo',
    task_id: ok.body.id,
    model: 'social-notes-data',
    method: 'POST',
    path: '/v1/tasks',
    status: 200,
    error_code: null,
  });
  expect((await t.admin.get(`/_emulator/records/${bad.headers['x-request-id']}`)).body).toMatchObject({ status: 422, error_code: 'invalid_params' });
});

it('lists records newest first, filtered by account, path and status', async () => {
  await t.api.get('/v1/tasks');
  await t.api.post('/v1/tasks', socialNote());
  await t.api.get('/v1/nowhere');
  const all = (await t.admin.get('/_emulator/records')).body.data;
  expect(all.map((c: { path: string }) => c.path)).toEqual(['/v1/nowhere', '/v1/tasks', '/v1/tasks']);
  const notFound = (await t.admin.get('/_emulator/records?status=404')).body.data;
  expect(notFound.map((c: { path: string }) => c.path)).toEqual(['/v1/nowhere']);
  const page2 = (await t.admin.get('/_emulator/records?limit=2&page=2')).body;
  expect(page2).toMatchObject({ page: 2, limit: 2, has_more: false });
  expect(page2.data.map((c: { path: string }) => c.path)).toEqual(['/v1/tasks']);
  expect((await t.admin.get('/_emulator/records?limit=2')).body.has_more).toBe(true);
  expect((await t.admin.get('/_emulator/records?path=/v1/tasks&limit=1')).body.data).toHaveLength(1);
  expect((await t.admin.get('/_emulator/records?account=acct_other')).body.data).toEqual([]);
  expect((await t.admin.get('/_emulator/records/req_000000000000000000000000')).status).toBe(404);
});

it('drops records older than 30 days on the clock, and keeps younger ones', async () => {
  const old = await t.api.get('/v1/tasks');
  await t.admin.post('/_emulator/clock/advance', { seconds: 29 * 24 * 3600 });
  const young = await t.api.get('/v1/tasks');
  await t.admin.post('/_emulator/clock/advance', { seconds: 24 * 3600 });
  expect((await t.admin.get(`/_emulator/records/${old.headers['x-request-id']}`)).status).toBe(404);
  expect((await t.admin.get(`/_emulator/records/${young.headers['x-request-id']}`)).status).toBe(200);
});

it('keeps the first 100 headers of a request that sent more, so its record still imports', async () => {
  const many = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`x-extra-${i}`, String(i)]));
  const res = await t.api.get('/v1/models', many);
  const record = (await t.admin.get(`/_emulator/records/${res.headers['x-request-id']}`)).body;
  expect(Object.keys(record.request_headers)).toHaveLength(100);
  expect(record.request_headers['x-extra-0']).toBe('0');
  const exported = (await t.admin.post('/_emulator/state/export')).body;
  expect((await t.admin.post('/_emulator/state/import', exported)).status).toBe(200);
});
