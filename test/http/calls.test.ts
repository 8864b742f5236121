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
  const record = await t.admin.get(`/_emulator/calls/${id}`);
  expect(record.body).toEqual({
    request_id: id,
    at: '2026-11-23T09:00:00+08:00',
    account_id: null,
    method: 'GET',
    path: '/v1/tasks',
    status: 401,
    error_code: 'invalid_api_key',
    model: null,
  });
});

it('records accepted and refused submits with their account and status', async () => {
  const ok = await t.api.post('/v1/tasks', socialNote());
  const bad = await t.api.post('/v1/tasks', { model: 'social-notes-data', input: {} });
  expect((await t.admin.get(`/_emulator/calls/${ok.headers['x-request-id']}`)).body).toMatchObject({
    account_id: 'acct_demo',
    method: 'POST',
    path: '/v1/tasks',
    status: 200,
    error_code: null,
  });
  expect((await t.admin.get(`/_emulator/calls/${bad.headers['x-request-id']}`)).body).toMatchObject({ status: 422, error_code: 'invalid_params' });
});

it('lists records newest first, filtered by account, path and status', async () => {
  await t.api.get('/v1/tasks');
  await t.api.post('/v1/tasks', socialNote());
  await t.api.get('/v1/nowhere');
  const all = (await t.admin.get('/_emulator/calls')).body.data;
  expect(all.map((c: { path: string }) => c.path)).toEqual(['/v1/nowhere', '/v1/tasks', '/v1/tasks']);
  const notFound = (await t.admin.get('/_emulator/calls?status=404')).body.data;
  expect(notFound.map((c: { path: string }) => c.path)).toEqual(['/v1/nowhere']);
  expect((await t.admin.get('/_emulator/calls?path=/v1/tasks&limit=1')).body.data).toHaveLength(1);
  expect((await t.admin.get('/_emulator/calls?account=acct_other')).body.data).toEqual([]);
  expect((await t.admin.get('/_emulator/calls/req_000000000000000000000000')).status).toBe(404);
});
