import { afterEach, expect, it } from 'vitest';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// The reference types a task's webhook_url as a string (optional: left out, the account's default is used), and
// so does the document. `--allow-insecure-webhooks` lifts the https rule and the internal-address rule for local
// receivers; it does not make a null, a number or an object an address.
let t: TestEmulator | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const NOT_A_STRING = [
  ['null', null],
  ['a number', 42],
  ['an object', { url: 'https://hooks.example.com/cb' }],
  ['an array', ['https://hooks.example.com/cb']],
] as const;

it.each([
  ['by default', false],
  ['with --allow-insecure-webhooks', true],
])('refuses webhook_url: null %s with 422 invalid_params, creating and freezing nothing', async (_mode, allowInsecureWebhooks) => {
  t = await startEmulator({ allowInsecureWebhooks });
  const res = await t.api.post('/v1/tasks', { ...socialNote(), webhook_url: null });
  expect(res.status).toBe(422);
  expect(res.body.error).toMatchObject({ code: 'invalid_params', details: [{ field: 'webhook_url', message: 'must be string' }] });
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body).toMatchObject({ frozen: '0.000' });
});

it.each(NOT_A_STRING)('refuses a webhook_url that is %s with --allow-insecure-webhooks', async (_what, value) => {
  t = await startEmulator({ allowInsecureWebhooks: true });
  const res = await t.api.post('/v1/tasks', { ...socialNote(), webhook_url: value });
  expect(res.status).toBe(422);
  expect(res.body.error.details).toContainEqual({ field: 'webhook_url', message: 'must be string' });
});

it('still takes an http loopback webhook_url with --allow-insecure-webhooks, and a task without one', async () => {
  t = await startEmulator({ allowInsecureWebhooks: true });
  expect((await t.api.post('/v1/tasks', { ...socialNote(), webhook_url: 'http://127.0.0.1:9999/cb' })).status).toBe(200);
  expect((await t.api.post('/v1/tasks', socialNote())).status).toBe(200);
});
