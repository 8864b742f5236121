import request from 'supertest';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

it('answers health without a token', async () => {
  const res = await t.admin.send((r) => r.get('/_emulator/health'));
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'ok', clock: { now: '2026-11-23T09:00:00+08:00', mode: 'manual' } });
});

it.each([
  ['no token', undefined],
  ['a wrong token', 'Bearer nope'],
  ['the token without Bearer', ADMIN_TOKEN],
])('refuses control calls with %s: 401 unauthorized', async (_name, authorization) => {
  const res = await t.admin.send((r) => {
    const test = r.get('/_emulator/clock');
    return authorization ? test.set('Authorization', authorization) : test;
  });
  expect(res.status).toBe(401);
  expect(res.body.error).toMatchObject({ code: 'unauthorized', request_id: res.headers['x-request-id'] });
});

it('reads and advances the manual clock', async () => {
  expect((await t.admin.get('/_emulator/clock')).body).toEqual({
    now: '2026-11-23T09:00:00+08:00',
    mode: 'manual',
    speed: 1,
  });
  const advanced = await t.admin.post('/_emulator/clock/advance', { seconds: 3600 + 61 });
  expect(advanced.body).toMatchObject({ now: '2026-11-23T10:01:01+08:00' });
  expect((await t.admin.get('/_emulator/clock')).body.now).toBe('2026-11-23T10:01:01+08:00');
  const task = await t.api.post('/v1/tasks', socialNote());
  expect(task.body.created_at).toBe('2026-11-23T10:01:01+08:00');
  expect(task.body.id).toMatch(/^T261123100101/);
});

it.each([
  ['a negative number', { seconds: -1 }],
  ['a string', { seconds: 'soon' }],
  ['nothing', {}],
])('refuses to advance the clock by %s', async (_name, body) => {
  const res = await t.admin.post('/_emulator/clock/advance', body);
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.details[0].field).toBe('seconds');
});

it('creates an account with points, a default callback address and a whsec_ secret', async () => {
  const res = await t.admin.post('/_emulator/accounts', { points: '250.5', webhook_url: 'https://hooks.example.com/a' });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({
    available: '250.500',
    frozen: '0.000',
    webhook_url: 'https://hooks.example.com/a',
  });
  expect(res.body.id).toMatch(/^acct_[a-z0-9]{12}$/);
  expect(res.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
  expect(Buffer.from(res.body.webhook_secret.slice(6), 'base64')).toHaveLength(24);
  expect((await t.admin.get(`/_emulator/accounts/${res.body.id}`)).body).toEqual(res.body);
});

it('creates an account with 100000.000 points by default', async () => {
  const res = await t.admin.post('/_emulator/accounts', {});
  expect(res.body.available).toBe('100000.000');
});

it.each([
  ['negative points', { points: '-5.000' }, 'points'],
  ['points as a float number', { points: 12.5 }, 'points'],
  ['a callback address that is not https', { webhook_url: 'http://hooks.example.com' }, 'webhook_url'],
])('refuses an account with %s', async (_name, body, field) => {
  const res = await t.admin.post('/_emulator/accounts', body);
  expect(res.status).toBe(422);
  expect(res.body.error.details[0].field).toBe(field);
});

it('creates keys that reach only their own account', async () => {
  const account = await t.admin.post('/_emulator/accounts', { points: '40.000' });
  const key = await t.admin.post(`/_emulator/accounts/${account.body.id}/keys`, {});
  expect(key.status).toBe(201);
  expect(key.body).toMatchObject({ account_id: account.body.id });
  expect(key.body.key).toMatch(/^sk-/);
  const task = await t.as(key.body.key).post('/v1/tasks', socialNote());
  expect(task.status).toBe(200);
  expect((await t.admin.get(`/_emulator/accounts/${account.body.id}`)).body).toMatchObject({
    available: '0.000',
    frozen: '40.000',
  });
});

it('answers 404 for keys of an unknown account', async () => {
  const res = await t.admin.post('/_emulator/accounts/acct_nobody/keys', {});
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
});

it('resets to the seeded demo account and key, keeping the clock', async () => {
  await t.api.post('/v1/tasks', socialNote());
  const extra = await t.admin.post('/_emulator/accounts', {});
  await t.admin.post('/_emulator/clock/advance', { seconds: 60 });
  const res = await t.admin.post('/_emulator/reset');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ ok: true, accounts: 1, keys: 1 });
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body).toMatchObject({
    available: '100000.000',
    frozen: '0.000',
  });
  expect((await t.admin.get(`/_emulator/accounts/${extra.body.id}`)).status).toBe(404);
  expect((await t.admin.get('/_emulator/clock')).body.now).toBe('2026-11-23T09:01:00+08:00');
});

it('answers unknown control paths with 404 in the general error shape', async () => {
  const res = await t.admin.get('/_emulator/nowhere');
  expect(res.status).toBe(404);
  expect(res.body.error).toMatchObject({ code: 'not_found', request_id: res.headers['x-request-id'] });
});

it('answers unknown top-level paths with 404 and a request id', async () => {
  const res = await request(t.emulator.app).get('/favicon.ico');
  expect(res.status).toBe(404);
  expect(res.headers['x-request-id']).toMatch(/^req_/);
});

it('refuses a speed for the manual clock with 422 naming speed', async () => {
  const res = await t.admin.post('/_emulator/clock/speed', { speed: 10 });
  expect(res.status).toBe(422);
  expect(res.body.error.details[0].field).toBe('speed');
});

it('sets the speed of a real clock', async () => {
  const real = await startEmulator({ clock: 'real', speed: 1 });
  try {
    const res = await real.admin.post('/_emulator/clock/speed', { speed: 60 });
    expect(res.body).toMatchObject({ mode: 'real', speed: 60 });
    expect((await real.admin.get('/_emulator/clock')).body.speed).toBe(60);
    expect((await real.admin.post('/_emulator/clock/speed', { speed: 0 })).status).toBe(422);
  } finally {
    await real.close();
  }
});
