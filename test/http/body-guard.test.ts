import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';

// Issue 36 items 5 and 6: a JSON body nested past 64 levels is refused from its bytes, before JSON.parse builds a
// level of it, and a body that is not UTF-8 is refused rather than read with U+FFFD in place of its bad bytes:
// 400 bad_request in every endpoint group's own shape, and nothing stored.

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t);
  api = t.as(account.key);
});
afterEach(() => t.close());

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
const DEPTH_MESSAGE = /^The request body nests deeper than 64 levels: level 65 opens at byte offset (\d+)\.$/;

/** A JSON text: `head`, then raw bytes, then `tail`. */
const bytes = (head: string, raw: number[], tail: string): Buffer => Buffer.concat([Buffer.from(head), Buffer.from(raw), Buffer.from(tail)]);

/** A POST of exactly these bytes (superagent would send a Buffer given as JSON as `{"type":"Buffer",...}`). */
function post(client: ApiClient, path: string, body: Buffer | string, headers: Record<string, string> = {}) {
  return client.send((r) =>
    r
      .post(path)
      .set(client === t.admin ? admin : { Authorization: `Bearer ${account.key}` })
      .set({ 'Content-Type': 'application/json', ...headers })
      .serialize((data: unknown) => data as string)
      .send(Buffer.isBuffer(body) ? body : Buffer.from(body)),
  );
}

const balances = async () => {
  const { available, frozen, charged } = (await t.admin.get(`/_emulator/accounts/${account.id}`)).body as Record<string, string>;
  return { available, frozen, charged };
};

it.each([
  ['POST /v1/tasks, in the general shape', '/v1/tasks', `{"model":"social-notes-data","input":{"mode":"note","agree":true},"metadata":`, 'general'],
  ['POST /v1/chat/completions, in its own shape', '/v1/chat/completions', '{"model":"svc-text-lite","messages":', 'chat'],
  ['POST /v1/messages, in its own shape', '/v1/messages', '{"model":"svc-text-lite","max_tokens":16,"messages":', 'messages'],
  ['the control API', '/_emulator/accounts', '{"points":"5.000","pad":', 'general'],
])('refuses a body nested 65 levels deep on %s, naming where it went too deep', async (_name, path, head, shape) => {
  const client = path.startsWith('/_emulator') ? t.admin : api;
  const res = await post(client, path, `${head}${nested(64)}}`);
  expect(res.status).toBe(400);
  const requestId = res.headers['x-request-id'];
  const error = { code: 'bad_request', message: expect.stringMatching(DEPTH_MESSAGE), request_id: requestId };
  if (shape === 'general') expect(res.body).toEqual({ error });
  if (shape === 'chat') expect(res.body).toEqual({ error: { ...error, type: 'bad_request', param: null } });
  if (shape === 'messages') expect(res.body).toEqual({ type: 'error', error: { ...error, type: 'bad_request' } });
  // The object is level 1: the 64th bracket after the head opens level 65.
  expect(DEPTH_MESSAGE.exec(res.body.error.message)?.[1]).toBe(String(head.length + 63));
});

it('takes 64 levels on the control API and refuses 65, creating nothing', async () => {
  const before = (await t.admin.get('/_emulator/accounts')).body.data.length;
  const refused = await post(t.admin, '/_emulator/accounts', `{"points":"5.000","pad":${nested(64)}}`);
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toMatch(DEPTH_MESSAGE);
  expect((await t.admin.get('/_emulator/accounts')).body.data.length).toBe(before);
  expect((await post(t.admin, '/_emulator/accounts', `{"points":"5.000","pad":${nested(63)}}`)).status).toBe(201);
});

it('refuses deep nesting from the bytes, before JSON.parse: a body that never closes is too deep, not malformed', async () => {
  const res = await post(api, '/v1/chat/completions', `{"model":"svc-text-lite","messages":${'['.repeat(100_000)}`);
  expect(res.status).toBe(400);
  expect(res.body.error.message).toMatch(DEPTH_MESSAGE);
});

it('refuses a 19 MB nested body on a text endpoint (under its 20 MB limit) at byte 64', async () => {
  const res = await post(api, '/v1/chat/completions', nested((19 * 1024 * 1024) / 2));
  expect(res.status).toBe(400);
  expect(res.body.error.message).toBe('The request body nests deeper than 64 levels: level 65 opens at byte offset 64.');
  expect(await balances()).toEqual({ available: '100000.000', frozen: '0.000', charged: '0.000' });
});

it('refuses a compressed body that nests too deep once inflated', async () => {
  const body = gzipSync(`{"model":"social-notes-data","input":{"mode":"note","agree":true},"metadata":${nested(200)}}`);
  const res = await post(api, '/v1/tasks', body, { 'Content-Encoding': 'gzip' });
  expect(res.status).toBe(400);
  expect(res.body.error.message).toMatch(DEPTH_MESSAGE);
});

const task = (note: string): string => JSON.stringify({ ...socialNote(), metadata: { note } });

it.each([
  ['a Latin-1 byte', [0xe9]],
  ['a sequence cut short', [0xe4, 0xb8]],
  ['an overlong encoding of /', [0xc0, 0xaf]],
  ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ['a byte that never starts a character', [0xff]],
])('refuses a task body with %s with 400 bad_request and creates no task', async (_name, raw) => {
  const [head, tail] = task('caf\u0000').split('\\u0000') as [string, string];
  const res = await post(api, '/v1/tasks', bytes(head, raw, tail));
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: { code: 'bad_request', message: 'The request body is not valid UTF-8.', request_id: res.headers['x-request-id'] } });
  expect((await api.get('/v1/tasks')).body.data).toEqual([]);
  expect(await balances()).toEqual({ available: '100000.000', frozen: '0.000', charged: '0.000' });
});

it('takes UTF-8 in every script and keeps it as sent, and still refuses a byte order mark as JSON.parse does', async () => {
  const note = 'café 中文 😀 \u{1f469}\u{200d}\u{1f4bb}';
  const taken = await post(api, '/v1/tasks', task(note));
  expect(taken.status).toBe(200);
  expect(taken.body.metadata).toEqual({ note });
  const chat = await post(api, '/v1/chat/completions', JSON.stringify({ model: 'svc-text-lite', max_tokens: 8, messages: [{ role: 'user', content: note }] }));
  expect(chat.status).toBe(200);
  const bom = await post(api, '/v1/tasks', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(task(note))]));
  expect(bom.status).toBe(400);
  expect(bom.body.error.message).toBe('The request body is not valid JSON.');
  // A body that is not UTF-8 is never taken, whatever else it holds.
  expect((await post(api, '/v1/tasks', bytes(task(note).slice(0, -3), [0xff], '"}}'))).status).toBe(400);
  expect((await api.get('/v1/tasks')).body.data).toHaveLength(1);
});

it.each([
  ['POST /v1/chat/completions', '/v1/chat/completions', { model: 'svc-text-lite', max_tokens: 8, messages: [{ role: 'user', content: '\u0000' }] }, 'chat'],
  ['POST /v1/responses', '/v1/responses', { model: 'svc-text-lite', max_output_tokens: 16, input: '\u0000' }, 'chat'],
  ['POST /v1/messages', '/v1/messages', { model: 'svc-text-lite', max_tokens: 8, messages: [{ role: 'user', content: '\u0000' }] }, 'messages'],
])('refuses %s with a byte that is not UTF-8 with 400 in its own shape, charging nothing', async (_name, path, body, shape) => {
  const [head, tail] = JSON.stringify(body).split('\\u0000') as [string, string];
  const res = await post(api, path, bytes(`${head}caf`, [0xe9], tail));
  expect(res.status).toBe(400);
  const error = { code: 'bad_request', message: 'The request body is not valid UTF-8.', request_id: res.headers['x-request-id'] };
  if (shape === 'chat') expect(res.body).toEqual({ error: { ...error, type: 'bad_request', param: null } });
  if (shape === 'messages') expect(res.body).toEqual({ type: 'error', error: { ...error, type: 'bad_request' } });
  expect(await balances()).toEqual({ available: '100000.000', frozen: '0.000', charged: '0.000' });
});

it('refuses a control API body that is not UTF-8 with 400 bad_request, creating nothing', async () => {
  const before = (await t.admin.get('/_emulator/accounts')).body.data.length;
  const res = await post(t.admin, '/_emulator/accounts', bytes('{"points":"5.000","', [0xff], '":1}'));
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: { code: 'bad_request', message: 'The request body is not valid UTF-8.', request_id: res.headers['x-request-id'] } });
  expect((await t.admin.get('/_emulator/accounts')).body.data.length).toBe(before);
});
