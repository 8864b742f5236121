import { createHash, createHmac } from 'node:crypto';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { signRequest } from '../../src/keys/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// Signed requests of a key with signing on (timestamp on the real clock, nonce, HMAC over the raw bytes), the
// documented order of the key checks (each request breaks two rules and gets the earlier one's error), and the
// call records every /v1 request leaves.

let t: TestEmulator;
let account: { id: string; key: string };
let signed: { key: string; secret: string };
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '10000.000');
  const res = await t.admin.post(`/_emulator/accounts/${account.id}/keys`, { signing: true });
  expect(res.body).toMatchObject({ signing: true, signing_secret: expect.stringMatching(/^svs_[A-Za-z0-9]+$/) });
  signed = { key: res.body.key as string, secret: res.body.signing_secret as string };
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
});

const CHAT = '/v1/chat/completions';
const TASK_BODY = JSON.stringify(socialNote());
const CHAT_BODY = JSON.stringify({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say hello.' }] });
const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const nowSeconds = () => Math.floor(Date.now() / 1000);
const errorCode = (res: { body: { error?: { code?: string } } }) => res.body.error?.code;

/** A request sent with exactly these bytes (a string body as application/json) and these headers. */
const raw = (method: 'GET' | 'POST', path: string, body: string | undefined, headers: Record<string, string>) =>
  t.api.send((r) => {
    const req = (method === 'GET' ? r.get(path) : r.post(path)).set(headers);
    return body === undefined ? req : req.set('Content-Type', 'application/json').send(body);
  });
/** Signed with `signRequest` over what is sent, unless `sign` says to sign something else. */
const signedCall = (
  method: 'GET' | 'POST',
  path: string,
  body?: string,
  sign: Partial<{ method: string; path: string; body: string; timestamp: number; nonce: string; secret: string }> = {},
  key = signed.key,
) =>
  raw(method, path, body, {
    Authorization: `Bearer ${key}`,
    ...signRequest({ secret: signed.secret, method, path, ...(body !== undefined ? { body } : {}), ...sign }),
  });
const patchKey = (key: string, settings: Record<string, unknown>) =>
  t.admin.send((r) => r.patch(`/_emulator/keys/${key}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(settings));
const newKey = async (settings: Record<string, unknown>, accountId = account.id) => {
  const res = await t.admin.post(`/_emulator/accounts/${accountId}/keys`, settings);
  expect(res.status).toBe(201);
  return { key: res.body.key as string, api: t.as(res.body.key as string), secret: res.body.signing_secret as string | undefined };
};
const balances = async (id = account.id) => {
  const { available, frozen, charged } = (await t.admin.get(`/_emulator/accounts/${id}`)).body;
  return { available, frozen, charged };
};
/** The account's tasks, as an unsigned, unrestricted key of the account lists them. */
const taskCount = async (key = account.key) => (await t.as(key).get('/v1/tasks?limit=100')).body.data.length as number;
const record = async (res: { headers: Record<string, string> }) =>
  (await t.admin.get(`/_emulator/records/${res.headers['x-request-id']}`)).body;

// ---------------------------------------------------------------------------------------------------------------
// Valid signatures

it('accepts signed requests on a task submit, a task query, a list with a query string and a text call', async () => {
  const submitted = await signedCall('POST', '/v1/tasks', TASK_BODY);
  expect(submitted.status).toBe(200);
  const id = submitted.body.id as string;
  const queried = await signedCall('GET', `/v1/tasks/${id}`);
  expect([queried.status, queried.body.id]).toEqual([200, id]);
  const listed = await signedCall('GET', '/v1/tasks?limit=5&status=queued');
  expect([listed.status, listed.body.limit, listed.body.data.length]).toEqual([200, 5, 1]);
  const text = await signedCall('POST', CHAT, CHAT_BODY);
  expect([text.status, text.body.object]).toEqual([200, 'chat.completion']);
  const canceled = await signedCall('POST', `/v1/tasks/${id}/cancel`);
  expect([canceled.status, canceled.body.status]).toEqual([200, 'canceled']);
});

it('accepts a signature computed by hand with node:crypto exactly as documented, equal to what signRequest gives', async () => {
  const timestamp = String(nowSeconds());
  const nonce = 'hand-made-nonce-0001';
  const bodyHash = createHash('sha256').update(TASK_BODY, 'utf8').digest('hex');
  const canonical = `${timestamp}\n${nonce}\nPOST\n/v1/tasks\n${bodyHash}`;
  const signature = `v1=${createHmac('sha256', signed.secret).update(canonical).digest('hex')}`;
  expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
  expect(signRequest({ secret: signed.secret, method: 'post', path: '/v1/tasks', body: TASK_BODY, timestamp: Number(timestamp), nonce })).toEqual({
    'X-Svc-Timestamp': timestamp,
    'X-Svc-Nonce': nonce,
    'X-Svc-Signature': signature,
  });
  const res = await raw('POST', '/v1/tasks', TASK_BODY, {
    Authorization: `Bearer ${signed.key}`,
    'X-Svc-Timestamp': timestamp,
    'X-Svc-Nonce': nonce,
    'X-Svc-Signature': signature,
  });
  expect(res.status).toBe(200);

  // A request without a body is signed over the SHA-256 of nothing.
  const emptyHash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  const getCanonical = `${timestamp}\nhand-made-nonce-0002\nGET\n/v1/tasks/${res.body.id}\n${emptyHash}`;
  const get = await raw('GET', `/v1/tasks/${res.body.id}`, undefined, {
    Authorization: `Bearer ${signed.key}`,
    'X-Svc-Timestamp': timestamp,
    'X-Svc-Nonce': 'hand-made-nonce-0002',
    'X-Svc-Signature': `v1=${createHmac('sha256', signed.secret).update(getCanonical).digest('hex')}`,
  });
  expect(get.status).toBe(200);
});

it('leaves an unsigned key unaffected by well-formed signing headers that would all be refused on a signing key', async () => {
  const stale = signRequest({ secret: 'svs_not-this-key', method: 'POST', path: '/v1/tasks', body: 'other', timestamp: nowSeconds() - 3600, nonce: 'same-nonce-every-time' });
  const headers = { Authorization: `Bearer ${DEMO_KEY}`, ...stale };
  const first = await raw('POST', '/v1/tasks', TASK_BODY, headers);
  expect(first.status).toBe(200);
  expect((await raw('POST', '/v1/tasks', TASK_BODY, headers)).status).toBe(200); // the "nonce" again
  expect((await raw('GET', `/v1/tasks/${first.body.id}`, undefined, headers)).status).toBe(200);
  expect((await raw('POST', CHAT, CHAT_BODY, headers)).status).toBe(200);
});

it('leaves an unsigned key unaffected by malformed signing headers too, on a task submit as on every other call', async () => {
  const headers = { Authorization: `Bearer ${DEMO_KEY}`, 'X-Svc-Timestamp': 'soon', 'X-Svc-Nonce': 'x', 'X-Svc-Signature': 'v1=00' };
  expect((await raw('GET', '/v1/tasks', undefined, headers)).status).toBe(200);
  expect((await raw('POST', CHAT, CHAT_BODY, headers)).status).toBe(200);
  // The headers mean nothing for a key without signing; a submit must not refuse them as parameters either.
  const submit = await raw('POST', '/v1/tasks', TASK_BODY, headers);
  expect([submit.status, submit.body.error?.details]).toEqual([200, undefined]);
});

// ---------------------------------------------------------------------------------------------------------------
// Refused signatures

it('answers 401 signature_required for each missing header, on task and text calls', async () => {
  for (const missing of ['X-Svc-Timestamp', 'X-Svc-Nonce', 'X-Svc-Signature']) {
    for (const [method, path, body] of [['POST', '/v1/tasks', TASK_BODY], ['GET', '/v1/tasks'], ['POST', CHAT, CHAT_BODY]] as const) {
      const headers: Record<string, string> = {
        Authorization: `Bearer ${signed.key}`,
        ...signRequest({ secret: signed.secret, method, path, ...(body !== undefined ? { body } : {}) }),
      };
      delete headers[missing];
      const res = await raw(method, path, body, headers);
      expect([missing, path, res.status, errorCode(res)]).toEqual([missing, path, 401, 'signature_required']);
    }
  }
  const bare = await raw('POST', CHAT, CHAT_BODY, { Authorization: `Bearer ${signed.key}` });
  expect(bare.body.error).toMatchObject({ code: 'signature_required', type: 'signature_required' });
  expect(await taskCount()).toBe(0);
});

it('checks X-Svc-Timestamp against the real clock: 300 s either way passes, 301 s is signature_expired', async () => {
  const wall = Date.parse('2026-11-23T01:00:00Z');
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(wall);
  const at = (offset: number, path: string, body?: string, method: 'GET' | 'POST' = 'POST') =>
    signedCall(method, path, body, { timestamp: wall / 1000 + offset });
  for (const offset of [-301, 301]) {
    const task = await at(offset, '/v1/tasks', TASK_BODY);
    expect([offset, task.status, errorCode(task)]).toEqual([offset, 401, 'signature_expired']);
    const text = await at(offset, CHAT, CHAT_BODY);
    expect([offset, text.status, errorCode(text)]).toEqual([offset, 401, 'signature_expired']);
  }
  expect(await taskCount()).toBe(0);
  for (const offset of [-300, -299, 299, 300]) {
    expect([offset, (await at(offset, '/v1/tasks', TASK_BODY)).status]).toEqual([offset, 200]);
  }
  expect((await at(-299, CHAT, CHAT_BODY)).status).toBe(200);
  expect((await at(299, '/v1/tasks', undefined, 'GET')).status).toBe(200);
  // The virtual clock has nothing to do with it: a day later on the clock the same real time still passes.
  await advance(86400);
  expect((await at(-299, '/v1/tasks', TASK_BODY)).status).toBe(200);
});

it('accepts a timestamp 299 s old and refuses 301 s old or ahead on the running wall clock too', async () => {
  // Rounded so that the milliseconds the request takes cannot move it across the 300 s line.
  const stale = await signedCall('POST', '/v1/tasks', TASK_BODY, { timestamp: nowSeconds() - 301 });
  expect([stale.status, errorCode(stale)]).toEqual([401, 'signature_expired']);
  const ahead = await signedCall('POST', '/v1/tasks', TASK_BODY, { timestamp: Math.ceil(Date.now() / 1000) + 301 });
  expect([ahead.status, errorCode(ahead)]).toEqual([401, 'signature_expired']);
  const fresh = await signedCall('POST', '/v1/tasks', TASK_BODY, { timestamp: Math.ceil(Date.now() / 1000) - 299 });
  expect(fresh.status).toBe(200);
});

it('refuses a replayed nonce with nonce_reused, per key, and does not burn a nonce on a bad signature', async () => {
  const nonce = 'replay-me-12345';
  const first = await signedCall('POST', '/v1/tasks', TASK_BODY, { nonce });
  expect(first.status).toBe(200);
  const replay = await signedCall('POST', '/v1/tasks', TASK_BODY, { nonce });
  expect([replay.status, errorCode(replay)]).toEqual([401, 'nonce_reused']);
  const onQuery = await signedCall('GET', `/v1/tasks/${first.body.id}`, undefined, { nonce });
  expect([onQuery.status, errorCode(onQuery)]).toEqual([401, 'nonce_reused']);
  const onText = await signedCall('POST', CHAT, CHAT_BODY, { nonce });
  expect([onText.status, onText.body.error.code]).toEqual([401, 'nonce_reused']);
  expect(await taskCount()).toBe(1);

  // Another signing key of the account has nonces of its own.
  const other = await newKey({ signing: true });
  const res = await raw('POST', '/v1/tasks', TASK_BODY, {
    Authorization: `Bearer ${other.key}`,
    ...signRequest({ secret: other.secret ?? '', method: 'POST', path: '/v1/tasks', body: TASK_BODY, nonce }),
  });
  expect(res.status).toBe(200);

  // A request refused for its signature does not use up its nonce.
  const fresh = 'not-yet-used-1';
  const bad = await signedCall('POST', '/v1/tasks', TASK_BODY, { nonce: fresh, secret: 'svs_wrong' });
  expect(errorCode(bad)).toBe('signature_invalid');
  expect((await signedCall('POST', '/v1/tasks', TASK_BODY, { nonce: fresh })).status).toBe(200);
});

it('takes nonces of 8 to 64 visible characters and refuses others as signature_invalid', async () => {
  for (const [nonce, status] of [
    ['a'.repeat(7), 401],
    ['a'.repeat(8), 200],
    ['b'.repeat(64), 200],
    ['c'.repeat(65), 401],
    ['with space', 401],
  ] as const) {
    const res = await signedCall('GET', '/v1/tasks', undefined, { nonce });
    expect([nonce, res.status, res.status === 401 ? errorCode(res) : null]).toEqual([nonce, status, status === 401 ? 'signature_invalid' : null]);
  }
});

it('answers signature_invalid to one changed body byte, another path or query, another method or another secret', async () => {
  const changed = TASK_BODY.replace('"note"', '"nota"');
  expect(changed.length).toBe(TASK_BODY.length);
  const cases = [
    await signedCall('POST', '/v1/tasks', changed, { body: TASK_BODY }),
    await signedCall('POST', CHAT, CHAT_BODY.replace('hello', 'hellp'), { body: CHAT_BODY }),
    await signedCall('GET', '/v1/tasks?limit=6', undefined, { path: '/v1/tasks?limit=5' }),
    await signedCall('GET', '/v1/tasks?limit=5', undefined, { path: '/v1/tasks' }),
    await signedCall('POST', '/v1/tasks', TASK_BODY, { path: '/v1/tasks/' }),
    await signedCall('POST', '/v1/tasks', TASK_BODY, { method: 'PUT' }),
    await signedCall('GET', '/v1/tasks', undefined, { method: 'POST' }),
    await signedCall('POST', CHAT, CHAT_BODY, { secret: `${signed.secret}x` }),
  ];
  expect(cases.map((r) => [r.status, errorCode(r)])).toEqual(cases.map(() => [401, 'signature_invalid']));
  // The hex alone, without the v1= tag, is not a signature either.
  const headers = signRequest({ secret: signed.secret, method: 'POST', path: '/v1/tasks', body: TASK_BODY });
  const untagged = await raw('POST', '/v1/tasks', TASK_BODY, {
    Authorization: `Bearer ${signed.key}`,
    ...headers,
    'X-Svc-Signature': headers['X-Svc-Signature'].slice(3),
  });
  expect(errorCode(untagged)).toBe('signature_invalid');
  expect(await taskCount()).toBe(0);
  expect(await balances()).toEqual({ available: '10000.000', frozen: '0.000', charged: '0.000' });
});

it('shows the signing secret only when signing is turned on, and a secret stops working once signing is turned off and on again', async () => {
  const view = (await t.admin.get(`/_emulator/keys/${signed.key}`)).body;
  expect(view.signing).toBe(true);
  expect(view).not.toHaveProperty('signing_secret');
  const again = await patchKey(signed.key, { signing: true });
  expect(again.body).not.toHaveProperty('signing_secret'); // already on: the same secret stays
  expect((await signedCall('GET', '/v1/tasks')).status).toBe(200);

  expect((await patchKey(signed.key, { signing: false })).body.signing).toBe(false);
  expect((await t.as(signed.key).get('/v1/tasks')).status).toBe(200);
  const renewed = await patchKey(signed.key, { signing: true });
  expect(renewed.body.signing_secret).toMatch(/^svs_/);
  expect(renewed.body.signing_secret).not.toBe(signed.secret);
  expect(errorCode(await signedCall('GET', '/v1/tasks'))).toBe('signature_invalid');
  expect((await signedCall('GET', '/v1/tasks', undefined, { secret: renewed.body.signing_secret })).status).toBe(200);
});

// ---------------------------------------------------------------------------------------------------------------
// Order of checks: authentication, signing, rate, model permission, validation, quota, points, concurrency

it('authentication before signing: an unknown key with a bad signature is 401 invalid_api_key', async () => {
  const res = await raw('POST', '/v1/tasks', TASK_BODY, {
    Authorization: 'Bearer sk-no-such-key',
    ...signRequest({ secret: signed.secret, method: 'POST', path: '/v1/tasks', body: 'other' }),
  });
  expect([res.status, errorCode(res)]).toEqual([401, 'invalid_api_key']);
});

it('signing before rate: a bad signature over the rate is 401, and a refused signature does not use the window', async () => {
  await patchKey(signed.key, { rpm: 1 });
  expect((await signedCall('GET', '/v1/tasks')).status).toBe(200);
  const bad = await signedCall('GET', '/v1/tasks', undefined, { secret: 'svs_wrong' });
  expect([bad.status, errorCode(bad)]).toEqual([401, 'signature_invalid']);
  const missing = await raw('GET', '/v1/tasks', undefined, { Authorization: `Bearer ${signed.key}` });
  expect([missing.status, errorCode(missing)]).toEqual([401, 'signature_required']);
  const over = await signedCall('GET', '/v1/tasks');
  expect([over.status, errorCode(over), over.headers['retry-after']]).toEqual([429, 'rate_limited', '60']);

  await advance(60);
  // Refused signatures in the new minute take no place in the window: the one signed request still fits.
  expect(errorCode(await signedCall('GET', '/v1/tasks', undefined, { secret: 'svs_wrong' }))).toBe('signature_invalid');
  expect(errorCode(await signedCall('GET', '/v1/tasks', undefined, { timestamp: nowSeconds() - 400 }))).toBe('signature_expired');
  expect((await signedCall('GET', '/v1/tasks')).status).toBe(200);
  expect((await signedCall('GET', '/v1/tasks')).status).toBe(429);
});

it('rate before model permission: over the rate with a forbidden model is 429, and a 403 still counts toward the rate', async () => {
  const { api } = await newKey({ rpm: 2, models: ['social-notes-data'] });
  const forbidden = { model: 'video-gen-2.0-fast', input: { prompt: 'p' } };
  expect(errorCode(await api.post('/v1/tasks', forbidden))).toBe('permission_denied');
  expect((await api.post('/v1/tasks', socialNote())).status).toBe(200);
  const res = await api.post('/v1/tasks', forbidden);
  expect([res.status, errorCode(res), res.headers['retry-after']]).toEqual([429, 'rate_limited', '60']);
  const text = await api.post(CHAT, JSON.parse(CHAT_BODY));
  expect([text.status, errorCode(text)]).toEqual([429, 'rate_limited']);
});

it('model permission before validation: a forbidden model with invalid parameters is 403', async () => {
  const { api } = await newKey({ models: ['social-notes-data'] });
  const task = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { duration: 99 } });
  expect([task.status, errorCode(task)]).toEqual([403, 'permission_denied']);
  const text = await api.post(CHAT, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'x' }], n: 2, max_tokens: 999999 });
  expect([text.status, errorCode(text)]).toEqual([403, 'permission_denied']);
});

it('validation before quota: invalid parameters over the quota are 422 invalid_params', async () => {
  const { api } = await newKey({ quota: { points: '10.000', period: 'daily' } });
  const task = await api.post('/v1/tasks', { model: 'social-notes-data', input: { mode: 'note', agree: false } });
  expect([task.status, errorCode(task)]).toEqual([422, 'invalid_params']);
  expect(errorCode(await api.post('/v1/tasks', socialNote()))).toBe('key_quota_exceeded');
  const text = await api.post(CHAT, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'x' }], max_tokens: 999999 });
  expect([text.status, errorCode(text)]).toEqual([422, 'invalid_params']);
});

it('quota before points: over the quota with too few points is 402 key_quota_exceeded', async () => {
  const poor = await newAccount(t, '30.000');
  const { key, api } = await newKey({ quota: { points: '20.000', period: 'daily' } }, poor.id);
  const res = await api.post('/v1/tasks', socialNote());
  expect([res.status, errorCode(res)]).toEqual([402, 'key_quota_exceeded']);
  // Without the quota, the points are what refuses.
  await patchKey(key, { quota: null });
  const next = await api.post('/v1/tasks', socialNote());
  expect([next.status, errorCode(next)]).toEqual([402, 'insufficient_points']);
  expect(await balances(poor.id)).toEqual({ available: '30.000', frozen: '0.000', charged: '0.000' });
});

it('points before concurrency: too few points over the cap is 402 insufficient_points', async () => {
  const poor = await newAccount(t, '50.000');
  const { api } = await newKey({ concurrency: 1 }, poor.id);
  expect((await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'timeout-in-queue' })).status).toBe(200);
  const res = await api.post('/v1/tasks', socialNote());
  expect([res.status, errorCode(res)]).toEqual([402, 'insufficient_points']);
  // A call the points do cover (a short text call) is refused by the cap.
  const text = await api.post(CHAT, { model: 'svc-text-lite', messages: [{ role: 'user', content: 'x' }], max_tokens: 16 });
  expect([text.status, errorCode(text)]).toEqual([429, 'concurrency_limited']);
  expect(await balances(poor.id)).toEqual({ available: '10.000', frozen: '40.000', charged: '0.000' });
  expect(await taskCount(poor.key)).toBe(1);
});

// ---------------------------------------------------------------------------------------------------------------
// Call records

it('records accepted and refused requests with key, status, error code and latency, and links a submission to its task', async () => {
  const ok = await signedCall('POST', '/v1/tasks', TASK_BODY);
  const unsigned = await raw('POST', '/v1/tasks', TASK_BODY, { Authorization: `Bearer ${signed.key}` });
  const text = await signedCall('POST', CHAT, CHAT_BODY);
  const unknown = await raw('GET', '/v1/tasks', undefined, { Authorization: 'Bearer sk-nobody' });

  expect(await record(ok)).toEqual({
    request_id: ok.headers['x-request-id'],
    at: '2026-11-23T09:00:00+08:00',
    key: signed.key,
    account_id: account.id,
    method: 'POST',
    path: '/v1/tasks',
    status: 200,
    error_code: null,
    model: 'social-notes-data',
    task_id: ok.body.id,
    latency_ms: expect.any(Number),
    scenario: 'default',
    // Signed: the signing headers are kept masked, as the key is.
    request_headers: expect.objectContaining({ authorization: '[redacted]', 'x-svc-signature': '[redacted]', 'x-svc-nonce': '[redacted]' }),
  });
  expect(await record(unsigned)).toEqual({
    request_id: unsigned.headers['x-request-id'],
    at: '2026-11-23T09:00:00+08:00',
    key: signed.key,
    account_id: account.id,
    method: 'POST',
    path: '/v1/tasks',
    status: 401,
    error_code: 'signature_required',
    model: null,
    latency_ms: expect.any(Number),
    request_headers: expect.objectContaining({ authorization: '[redacted]' }),
    error_message: expect.stringContaining('X-Svc-'),
  });
  const textRecord = await record(text);
  expect(textRecord).toMatchObject({ key: signed.key, path: CHAT, status: 200, error_code: null, text: { stream: false, client_closed: false } });
  expect(textRecord.text.input_tokens).toBe(text.body.usage.prompt_tokens);
  expect(textRecord.text.output_tokens).toBe(text.body.usage.completion_tokens);
  expect(textRecord).not.toHaveProperty('task_id');
  expect(await record(unknown)).toMatchObject({ key: null, account_id: null, status: 401, error_code: 'invalid_api_key' });
  for (const r of [ok, unsigned, text, unknown]) expect((await record(r)).latency_ms).toBeGreaterThanOrEqual(0);
});

it('records refusals by every key check with their codes, and finds them by key, status, error code, path and model', async () => {
  const { key, api } = await newKey({ rpm: 3, models: ['social-notes-data'] });
  const ok = await api.post('/v1/tasks', socialNote());
  await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  await api.get('/v1/tasks');
  const limited = await api.get('/v1/tasks');
  expect(limited.status).toBe(429);
  await t.api.get('/v1/tasks'); // another key's call

  const list = async (query: string) =>
    (await t.admin.get(`/_emulator/records?${query}`)).body.data.map((r: { status: number; error_code: string | null }) => [r.status, r.error_code]);
  expect(await list(`key=${key}`)).toEqual([
    [429, 'rate_limited'],
    [200, null],
    [403, 'permission_denied'],
    [200, null],
  ]);
  expect(await list(`key=${key}&status=429`)).toEqual([[429, 'rate_limited']]);
  expect(await list(`error_code=permission_denied`)).toEqual([[403, 'permission_denied']]);
  expect(await list(`key=${key}&path=/v1/tasks&model=social-notes-data`)).toEqual([[200, null]]);
  expect((await t.admin.get(`/_emulator/records?account=${account.id}&status=200&path=/v1/tasks`)).body.data.map((r: { key: string }) => r.key)).toEqual([
    key,
    key,
  ]);
  expect((await t.admin.get(`/_emulator/records?error_code=permission_denied`)).body.data[0].key).toBe(key);
  expect((await record(ok)).task_id).toBe(ok.body.id);
});

it('pages records newest first with has_more', async () => {
  const { key, api } = await newKey({});
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    await advance(1);
    ids.push((await api.get(`/v1/tasks?limit=${i + 1}`)).headers['x-request-id'] as string);
  }
  const page = async (n: number) => (await t.admin.get(`/_emulator/records?key=${key}&limit=2&page=${n}`)).body;
  const [one, two, three, four] = [await page(1), await page(2), await page(3), await page(4)];
  expect(one.data.map((r: { request_id: string }) => r.request_id)).toEqual([ids[4], ids[3]]);
  expect([one.page, one.limit, one.has_more]).toEqual([1, 2, true]);
  expect(two.data.map((r: { request_id: string }) => r.request_id)).toEqual([ids[2], ids[1]]);
  expect(two.has_more).toBe(true);
  expect(three.data.map((r: { request_id: string }) => r.request_id)).toEqual([ids[0]]);
  expect(three.has_more).toBe(false);
  expect([four.data, four.has_more]).toEqual([[], false]);
  expect(one.data[0].at).toBe('2026-11-23T09:00:05+08:00');
  const exact = (await t.admin.get(`/_emulator/records?key=${key}&limit=5`)).body;
  expect([exact.data.length, exact.has_more]).toEqual([5, false]);
});

it('drops records older than 30 days on the clock and keeps younger ones', async () => {
  const old = await signedCall('GET', '/v1/tasks');
  const refusedOld = await raw('GET', '/v1/tasks', undefined, { Authorization: `Bearer ${signed.key}` });
  await advance(2 * 3600);
  const young = await signedCall('GET', '/v1/tasks');
  await advance(30 * 86400 + 3600 - 2 * 3600); // 30 days + 1 h after the first ones
  expect((await t.admin.get(`/_emulator/records/${old.headers['x-request-id']}`)).status).toBe(404);
  expect((await t.admin.get(`/_emulator/records/${refusedOld.headers['x-request-id']}`)).status).toBe(404);
  expect((await t.admin.get(`/_emulator/records/${young.headers['x-request-id']}`)).status).toBe(200);
  expect((await t.admin.get(`/_emulator/records?key=${signed.key}`)).body.data.map((r: { request_id: string }) => r.request_id)).toEqual([
    young.headers['x-request-id'],
  ]);
});
