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
  });
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
