import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { recordsBesideCalls } from '../support/state.ts';

// Per-key settings at their edges: the last request each setting allows and the first one it refuses. Models
// (403 permission_denied), a quota per Beijing day, week or month (402 key_quota_exceeded), requests per minute
// over a sliding window (429 rate_limited with Retry-After), and concurrency per key and per account (429
// concurrency_limited). A refused request creates nothing and charges nothing.

let t: TestEmulator;
let account: { id: string; key: string };
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '10000.000');
});
afterEach(() => t.close());

const CHAT = '/v1/chat/completions';
const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });
const now = async () => (await t.admin.get('/_emulator/clock')).body.now as string;
const balances = async (id = account.id) => {
  const { available, frozen, charged } = (await t.admin.get(`/_emulator/accounts/${id}`)).body;
  return { available, frozen, charged };
};
const keyView = async (key: string) => (await t.admin.get(`/_emulator/keys/${key}`)).body;
/** A new key of the test account (or another) with the given settings; its client. */
const newKey = async (settings: Record<string, unknown>, accountId = account.id): Promise<{ key: string; api: ApiClient }> => {
  const res = await t.admin.post(`/_emulator/accounts/${accountId}/keys`, settings);
  expect(res.status).toBe(201);
  return { key: res.body.key as string, api: t.as(res.body.key as string) };
};
/** The account's tasks as an unrestricted key of the same account sees them (so no limit of the key under test is touched). */
const tasksOf = async () => (await t.as(account.key).get('/v1/tasks?limit=100')).body.data.map((task: { id: string }) => task.id);
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello.' }], ...extra });
const submit = (api: ApiClient, scenario = 'timeout-in-queue', body = socialNote()) => api.post('/v1/tasks', body, { 'X-Emulator-Scenario': scenario });
const accepted = async (res: Promise<{ status: number; body: { id: string } }>) => {
  const r = await res;
  expect(r.status).toBe(200);
  return r.body.id;
};

// ---------------------------------------------------------------------------------------------------------------
// Callable models

it('lets a key call the models on its list and answers 403 permission_denied for any other, on tasks and text calls', async () => {
  const { key, api } = await newKey({ models: ['social-notes-data', 'svc-text-lite'] });
  expect((await keyView(key)).models).toEqual(['social-notes-data', 'svc-text-lite']);

  expect((await api.post('/v1/tasks', socialNote())).status).toBe(200);
  const video = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  expect(video.status).toBe(403);
  expect(video.body.error).toMatchObject({ code: 'permission_denied', request_id: video.headers['x-request-id'] });

  expect((await api.post(CHAT, chat('svc-text-lite'))).status).toBe(200);
  const pro = await api.post(CHAT, chat('svc-text-pro'));
  expect(pro.status).toBe(403);
  expect(pro.body.error).toMatchObject({ code: 'permission_denied', type: 'permission_denied' });
  const responses = await api.post('/v1/responses', { model: 'svc-text-pro', input: 'Say hello.' });
  expect([responses.status, responses.body.error.code]).toEqual([403, 'permission_denied']);
  const messages = await api.post('/v1/messages', { model: 'svc-text-pro', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
  expect([messages.status, messages.body.type, messages.body.error.code]).toEqual([403, 'error', 'permission_denied']);

  // Only the accepted task and the accepted text call were charged or frozen anything.
  const lite = (await t.admin.get(`/_emulator/records?key=${key}&path=${CHAT}&status=200`)).body.data[0].text.points.charged as string;
  expect(await tasksOf()).toHaveLength(1);
  expect((await balances()).frozen).toBe('40.000');
  const thousandths = (points: string) => Math.round(Number(points) * 1000);
  expect(thousandths((await balances()).available)).toBe(10_000_000 - 40_000 - thousandths(lite));
});

it('refuses a model the key may not call before looking the model up (403 even for an unknown model)', async () => {
  const { api } = await newKey({ models: ['social-notes-data'] });
  const unknown = await api.post('/v1/tasks', { model: 'no-such-model', input: {} });
  expect([unknown.status, unknown.body.error.code]).toEqual([403, 'permission_denied']);
  // The same request from a key without a list is a 404: the model really does not exist.
  const open = await t.as(account.key).post('/v1/tasks', { model: 'no-such-model', input: {} });
  expect([open.status, open.body.error.code]).toEqual([404, 'model_unavailable']);
});

// ---------------------------------------------------------------------------------------------------------------
// Quota

it('accepts freezes up to exactly the daily quota and refuses the first one beyond it with 402 key_quota_exceeded', async () => {
  const { key, api } = await newKey({ quota: { points: '80.000', period: 'daily' } });
  await accepted(submit(api));
  await accepted(submit(api)); // 80.000 of 80.000: the last allowed
  const refused = await submit(api);
  expect(refused.status).toBe(402);
  expect(refused.body.error.code).toBe('key_quota_exceeded');
  expect(refused.body.error.message).toContain('2026-11-24T00:00:00+08:00');
  expect((await keyView(key)).quota).toEqual({ points: '80.000', period: 'daily', used: '80.000', resets_at: '2026-11-24T00:00:00+08:00' });
  // Refused: nothing frozen beyond the two tasks, nothing created.
  expect(await balances()).toEqual({ available: '9920.000', frozen: '80.000', charged: '0.000' });
  expect(await tasksOf()).toHaveLength(2);
});

it('gives a canceled task its points back to the quota, so another task fits', async () => {
  const { key, api } = await newKey({ quota: { points: '80.000', period: 'daily' } });
  const first = await accepted(submit(api));
  await accepted(submit(api));
  expect((await submit(api)).status).toBe(402);

  const canceled = await api.post(`/v1/tasks/${first}/cancel`);
  expect(canceled.body).toMatchObject({ status: 'canceled', points: { frozen: '40.000', charged: '0.000', refunded: '40.000' } });
  expect((await keyView(key)).quota.used).toBe('40.000');
  await accepted(submit(api));
  expect((await keyView(key)).quota.used).toBe('80.000');
  const again = await submit(api);
  expect([again.status, again.body.error.code]).toEqual([402, 'key_quota_exceeded']);
});

it('gives a timed-out task its points back to the quota when it fails, not before', async () => {
  const { key, api } = await newKey({ quota: { points: '80.000', period: 'daily' } });
  await accepted(submit(api));
  await accepted(submit(api));
  await advance(599); // social-notes-data times out at 10 minutes
  expect((await keyView(key)).quota.used).toBe('80.000');
  expect((await submit(api)).status).toBe(402);
  await advance(1);
  expect((await keyView(key)).quota.used).toBe('0.000');
  await accepted(submit(api));
});

it('resets a daily quota at the next Beijing midnight: refused at 23:59:59, accepted at 00:00:00', async () => {
  const { key, api } = await newKey({ quota: { points: '80.000', period: 'daily' } });
  await accepted(submit(api, 'instant'));
  await accepted(submit(api, 'instant'));
  await advance(0);
  // Charged, not just frozen: the quota stays used.
  expect(await balances()).toEqual({ available: '9920.000', frozen: '0.000', charged: '80.000' });
  expect((await submit(api, 'instant')).status).toBe(402);

  await advance(14 * 3600 + 59 * 60 + 59);
  expect(await now()).toBe('2026-11-23T23:59:59+08:00');
  const late = await submit(api, 'instant');
  expect([late.status, late.body.error.code]).toEqual([402, 'key_quota_exceeded']);
  expect((await keyView(key)).quota).toMatchObject({ used: '80.000', resets_at: '2026-11-24T00:00:00+08:00' });

  await advance(1);
  expect((await keyView(key)).quota).toMatchObject({ used: '0.000', resets_at: '2026-11-25T00:00:00+08:00' });
  await accepted(submit(api, 'instant'));
  await accepted(submit(api, 'instant'));
  expect((await keyView(key)).quota.used).toBe('80.000');
  expect((await submit(api, 'instant')).status).toBe(402);
});

it('resets a weekly quota on Monday 00:00 Beijing time, not on Sunday and not at UTC midnight', async () => {
  await t.close();
  t = await startEmulator({ startTime: '2026-11-25T10:00:00+08:00' }); // a Wednesday
  account = await newAccount(t, '10000.000');
  const { key, api } = await newKey({ quota: { points: '40.000', period: 'weekly' } });
  await accepted(submit(api, 'instant'));
  const refused = await submit(api, 'instant');
  expect([refused.status, refused.body.error.code]).toEqual([402, 'key_quota_exceeded']);
  expect(refused.body.error.message).toContain('2026-11-30T00:00:00+08:00');
  expect((await keyView(key)).quota).toEqual({ points: '40.000', period: 'weekly', used: '40.000', resets_at: '2026-11-30T00:00:00+08:00' });

  await advance(4 * 86400 + 13 * 3600 + 59 * 60 + 59);
  expect(await now()).toBe('2026-11-29T23:59:59+08:00'); // Sunday
  expect((await submit(api, 'instant')).status).toBe(402);
  await advance(1);
  expect((await keyView(key)).quota).toMatchObject({ used: '0.000', resets_at: '2026-12-07T00:00:00+08:00' });
  await accepted(submit(api, 'instant'));
  expect((await submit(api, 'instant')).status).toBe(402);
});

it('resets a monthly quota on the 1st at 00:00 Beijing time, across a year end too', async () => {
  const { key, api } = await newKey({ quota: { points: '40.000', period: 'monthly' } });
  await accepted(submit(api, 'instant'));
  expect((await submit(api, 'instant')).status).toBe(402);
  expect((await keyView(key)).quota).toMatchObject({ used: '40.000', resets_at: '2026-12-01T00:00:00+08:00' });

  await advance(7 * 86400 + 14 * 3600 + 59 * 60 + 59);
  expect(await now()).toBe('2026-11-30T23:59:59+08:00');
  expect((await submit(api, 'instant')).status).toBe(402);
  await advance(1);
  expect((await keyView(key)).quota).toMatchObject({ used: '0.000', resets_at: '2027-01-01T00:00:00+08:00' });
  await accepted(submit(api, 'instant'));
  expect((await submit(api, 'instant')).status).toBe(402);
});

it("does not let a refund of an earlier period's freeze make room in the current period", async () => {
  const { key, api } = await newKey({ quota: { points: '80.000', period: 'daily' } });
  await advance(14 * 3600 + 55 * 60); // 23:55
  const yesterday = await accepted(submit(api)); // stays queued; times out at 00:05 the next day
  await advance(5 * 60);
  expect((await keyView(key)).quota).toMatchObject({ used: '0.000', resets_at: '2026-11-25T00:00:00+08:00' });
  await accepted(submit(api, 'instant'));
  await accepted(submit(api, 'instant'));
  expect((await submit(api, 'instant')).status).toBe(402);

  await advance(5 * 60); // 00:05: yesterday's task times out and is refunded
  expect((await t.as(account.key).get(`/v1/tasks/${yesterday}`)).body).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
  // Today's 80.000 were all frozen today and none of them came back: the quota is still used up.
  expect((await keyView(key)).quota.used).toBe('80.000');
  const third = await submit(api, 'instant');
  expect([third.status, third.body.error?.code]).toEqual([402, 'key_quota_exceeded']);
});

it("counts a text call's freeze against the quota and keeps only what it charged", async () => {
  const { key, api } = await newKey({ quota: { points: '1.000', period: 'daily' } });
  // 1000 output tokens of svc-text-lite freeze 1.200 points and more: over the quota.
  const big = await api.post(CHAT, chat('svc-text-lite', { max_tokens: 1000 }));
  expect([big.status, big.body.error.code]).toEqual([402, 'key_quota_exceeded']);
  expect((await keyView(key)).quota.used).toBe('0.000');
  expect(await balances()).toEqual({ available: '10000.000', frozen: '0.000', charged: '0.000' });

  const small = await api.post(CHAT, chat('svc-text-lite', { max_tokens: 100 }));
  expect(small.status).toBe(200);
  const record = (await t.admin.get(`/_emulator/records/${small.headers['x-request-id']}`)).body;
  expect(Number(record.text.points.frozen)).toBeGreaterThan(Number(record.text.points.charged));
  expect((await keyView(key)).quota.used).toBe(record.text.points.charged);
});

// ---------------------------------------------------------------------------------------------------------------
// Requests per minute

it('allows rpm requests in a sliding minute and answers the next with 429 rate_limited and the exact Retry-After', async () => {
  const { api } = await newKey({ rpm: 3 });
  const id = await accepted(submit(api, 'instant')); // 09:00:00
  await advance(10);
  expect((await api.get(`/v1/tasks/${id}`)).status).toBe(200); // 09:00:10: a GET of a task counts
  await advance(10);
  expect((await api.get(`/v1/tasks/${id}`)).status).toBe(200); // 09:00:20: the last allowed
  await advance(10);
  const refused = await api.get(`/v1/tasks/${id}`); // 09:00:30
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe('rate_limited');
  expect(refused.headers['retry-after']).toBe('30'); // 09:00:00 leaves the window at 09:01:00

  await advance(29);
  const stillRefused = await api.post('/v1/tasks', socialNote());
  expect([stillRefused.status, stillRefused.headers['retry-after']]).toEqual([429, '1']);
  await advance(1); // 09:01:00; the refused requests were not counted
  expect((await api.get(`/v1/tasks/${id}`)).status).toBe(200);
  const next = await api.get(`/v1/tasks/${id}`);
  expect([next.status, next.headers['retry-after']]).toEqual([429, '10']); // 09:00:10 leaves at 09:01:10
  expect(await tasksOf()).toEqual([id]);
});

it('counts text calls toward the rate and answers them 429 in their own error shape', async () => {
  const { api } = await newKey({ rpm: 2 });
  expect((await api.post(CHAT, chat('svc-text-lite'))).status).toBe(200);
  await advance(59);
  expect((await api.get('/v1/models')).status).toBe(200);
  const refused = await api.post(CHAT, chat('svc-text-lite'));
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ code: 'rate_limited', type: 'rate_limited' });
  expect(refused.headers['retry-after']).toBe('1');
  await advance(1);
  expect((await api.post(CHAT, chat('svc-text-lite'))).status).toBe(200);
});

// ---------------------------------------------------------------------------------------------------------------
// Concurrency

it('counts queued and processing tasks toward the key cap until they finish on the clock', async () => {
  const { api } = await newKey({ concurrency: 2 });
  const [a, b] = [await accepted(submit(api, 'default')), await accepted(submit(api, 'default'))];
  const refused = await submit(api, 'default');
  expect([refused.status, refused.body.error.code]).toEqual([429, 'concurrency_limited']);
  expect(refused.headers['retry-after']).toBeUndefined();

  await advance(1); // both processing now (notes: 1 s queued, 8 s processing)
  expect((await api.get(`/v1/tasks/${a}`)).body.status).toBe('processing');
  expect((await submit(api, 'default')).status).toBe(429);
  await advance(7);
  expect((await submit(api, 'default')).status).toBe(429);
  await advance(1); // 09:00:09: both succeeded
  expect((await api.get(`/v1/tasks/${b}`)).body.status).toBe('succeeded');
  await accepted(submit(api, 'default'));
  await accepted(submit(api, 'default'));
  expect((await submit(api, 'default')).status).toBe(429);
});

it('frees a key concurrency slot when a queued task is canceled', async () => {
  const { api } = await newKey({ concurrency: 2 });
  const first = await accepted(submit(api));
  await accepted(submit(api));
  expect((await submit(api)).status).toBe(429);
  expect((await api.post(`/v1/tasks/${first}/cancel`)).body.status).toBe('canceled');
  await accepted(submit(api));
  const again = await submit(api);
  expect([again.status, again.body.error.code]).toEqual([429, 'concurrency_limited']);
});

it('applies the account cap across all keys of the account', async () => {
  const one = await newKey({});
  const two = await newKey({});
  const patched = await t.admin.send((r) =>
    r.patch(`/_emulator/accounts/${account.id}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send({ concurrency: 1 }),
  );
  expect([patched.status, patched.body.concurrency]).toEqual([200, 1]);

  const running = await accepted(submit(one.api));
  const task = await submit(two.api);
  expect([task.status, task.body.error.code]).toEqual([429, 'concurrency_limited']);
  expect(task.body.error.message).toContain('account');
  const text = await two.api.post(CHAT, chat('svc-text-lite'));
  expect([text.status, text.body.error.code]).toEqual([429, 'concurrency_limited']);

  await one.api.post(`/v1/tasks/${running}/cancel`);
  await accepted(submit(two.api));
  expect((await submit(one.api)).status).toBe(429);

  // Another account is not held back by this one's cap.
  const other = await newAccount(t);
  await accepted(submit(t.as(other.key)));

  await t.admin.send((r) =>
    r.patch(`/_emulator/accounts/${account.id}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send({ concurrency: null }),
  );
  await accepted(submit(one.api));
});

it('admits a text call under the cap, and refuses one when tasks already fill the cap', async () => {
  const { api } = await newKey({ concurrency: 1 });
  // A text call ends with its answer: two in a row both fit a cap of 1.
  expect((await api.post(CHAT, chat('svc-text-lite'))).status).toBe(200);
  expect((await api.post(CHAT, chat('svc-text-lite'))).status).toBe(200);
  const task = await accepted(submit(api));
  const refused = await api.post(CHAT, chat('svc-text-lite'));
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ code: 'concurrency_limited', type: 'concurrency_limited' });
  await api.post(`/v1/tasks/${task}/cancel`);
  expect((await api.post(CHAT, chat('svc-text-lite'))).status).toBe(200);
});

it('counts a text call while it is in flight: a stream still sending holds the slot until it ends', async () => {
  const { key, api } = await newKey({ concurrency: 1 });
  let headersArrived!: () => void;
  const admitted = new Promise<void>((resolve) => {
    headersArrived = resolve;
  });
  // text-slow: 800 ms (real) to the first token. The stream's headers are sent once the call is admitted.
  const streaming = t.api.send((r) =>
    r
      .post(CHAT)
      .set({ Authorization: `Bearer ${key}`, 'X-Emulator-Scenario': 'text-slow' })
      .send(chat('svc-text-lite', { stream: true, max_tokens: 4 }))
      .buffer(true)
      .parse((res, done) => {
        headersArrived();
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(null, text));
      }),
  );
  await admitted;
  const task = await submit(api);
  expect([task.status, task.body.error.code]).toEqual([429, 'concurrency_limited']);
  const text = await api.post(CHAT, chat('svc-text-lite'));
  expect([text.status, text.body.error.code]).toEqual([429, 'concurrency_limited']);
  const stream = await streaming;
  expect(stream.status).toBe(200);
  expect(String(stream.body)).toContain('data: [DONE]');
  await accepted(submit(api));
});

// ---------------------------------------------------------------------------------------------------------------
// Refusals change nothing; settings can be turned off

it('creates nothing and charges nothing for a request refused by any key setting', async () => {
  const { api } = await newKey({ models: ['social-notes-data', 'svc-text-lite'], quota: { points: '80.000', period: 'daily' }, concurrency: 1 });
  await accepted(submit(api)); // 40.000 frozen, one running
  const store = () => recordsBesideCalls(t.emulator);
  const before = { store: store(), balances: await balances(), tasks: await tasksOf() };

  const refusals = [
    await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } }), // 403
    await api.post(CHAT, chat('svc-text-pro')), // 403
    await submit(api), // 429 concurrency (the quota would still allow 40.000 more)
    await api.post(CHAT, chat('svc-text-lite')), // 429 concurrency
    await api.post('/v1/tasks', { model: 'social-notes-data', input: { mode: 'search', keyword: 'k', agree: true, page: 99 } }), // 422
  ];
  expect(refusals.map((r) => r.body.error.code)).toEqual([
    'permission_denied',
    'permission_denied',
    'concurrency_limited',
    'concurrency_limited',
    'invalid_params',
  ]);
  expect(store()).toBe(before.store);
  expect(await balances()).toEqual(before.balances);
  expect(await tasksOf()).toEqual(before.tasks);
});

it('turns every setting off with PATCH nulls, and changes only the fields a PATCH names', async () => {
  const { key, api } = await newKey({
    models: ['svc-text-lite'],
    quota: { points: '40.000', period: 'daily' },
    rpm: 2,
    concurrency: 1,
  });
  const patch = (body: Record<string, unknown>) =>
    t.admin.send((r) => r.patch(`/_emulator/keys/${key}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(body));

  const partial = await patch({ rpm: 3 });
  expect(partial.status).toBe(200);
  expect(partial.body).toMatchObject({ models: ['svc-text-lite'], quota: { points: '40.000', period: 'daily' }, rpm: 3, concurrency: 1, signing: false });

  expect((await api.post('/v1/tasks', socialNote())).status).toBe(403);
  const off = await patch({ models: null, quota: null, rpm: null, concurrency: null });
  expect(off.body).toMatchObject({ object: 'key', key, models: null, quota: null, rpm: null, concurrency: null, signing: false });
  expect(await keyView(key)).toEqual(off.body);

  // Beyond every former limit: another model, over 40.000 of quota, over 1 running, over 3 a minute.
  for (let i = 0; i < 5; i++) await accepted(submit(api));
  expect(await tasksOf()).toHaveLength(5);
  expect((await balances()).frozen).toBe('200.000');
});
