import { afterEach, beforeEach, expect, it } from 'vitest';
import { controlsTransactionOnly, tablesWritten } from '../../src/store/driver.ts';
import { ADMIN_TOKEN, DEMO_KEY, newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// Every authenticated request reads its key and its account; they come from memory while their tables are
// unchanged (src/store/lookup.ts cachedRows, over the driver's write versions). Each case warms the cache with a
// request, changes the key or the account in one of the ways the emulator can, and checks that the very next
// request sees the change: settings PATCHed, a key gone, a reset, a state import, a write rolled back.

let t: TestEmulator;
let account: { id: string; key: string };
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '100.000');
});
afterEach(() => t.close());

const submit = (key: string, body = socialNote()) => t.as(key).post('/v1/tasks', body);
const chat = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 };
/** A PATCH through the control API (the harness's admin client has no patch of its own). */
const patch = (path: string, body: Record<string, unknown>) =>
  t.admin.send((r) => r.patch(path).set({ Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }).send(body));
const statusAndCode = (res: { status: number; body: { error?: { code?: string } } }) => [res.status, res.body.error?.code ?? null];

it("sees a key's models PATCHed on the very next request, both ways", async () => {
  expect((await submit(account.key)).status).toBe(200);
  expect((await patch(`/_emulator/keys/${account.key}`, { models: ['svc-text-lite'] })).status).toBe(200);
  expect(statusAndCode(await submit(account.key))).toEqual([403, 'permission_denied']);
  expect((await t.as(account.key).post('/v1/chat/completions', chat)).status).toBe(200);
  expect((await patch(`/_emulator/keys/${account.key}`, { models: null })).status).toBe(200);
  expect((await submit(account.key)).status).toBe(200);
});

it('sees signing and a rate limit turned on for a key on the very next request', async () => {
  expect((await t.as(account.key).get('/v1/tasks')).status).toBe(200);
  await patch(`/_emulator/keys/${account.key}`, { signing: true }).then((res) => expect(res.status).toBe(200));
  expect(statusAndCode(await t.as(account.key).get('/v1/tasks'))).toEqual([401, 'signature_required']);
  await patch(`/_emulator/keys/${account.key}`, { signing: false, rpm: 1 }).then((res) => expect(res.status).toBe(200));
  expect((await t.as(account.key).get('/v1/tasks')).status).toBe(200);
  expect(statusAndCode(await t.as(account.key).get('/v1/tasks'))).toEqual([429, 'rate_limited']);
});

it("sees an account's concurrency cap PATCHed on the very next request", async () => {
  expect((await t.as(account.key).post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'timeout-in-queue' })).status).toBe(200);
  await patch(`/_emulator/accounts/${account.id}`, { concurrency: 1 }).then((res) => expect(res.status).toBe(200));
  expect(statusAndCode(await submit(account.key))).toEqual([429, 'concurrency_limited']);
  await patch(`/_emulator/accounts/${account.id}`, { concurrency: null }).then((res) => expect(res.status).toBe(200));
  expect((await submit(account.key)).status).toBe(200);
});

it("sees the account's points move with each call it makes: the freeze after the last that fits is refused", async () => {
  // 100 points; a social note freezes 40.
  expect((await submit(account.key)).status).toBe(200);
  expect((await submit(account.key)).status).toBe(200);
  expect(statusAndCode(await submit(account.key))).toEqual([402, 'insufficient_points']);
  const { available } = (await t.admin.get(`/_emulator/accounts/${account.id}`)).body;
  expect(available).toBe('20.000');
});

it('refuses a key the store no longer holds on the very next request (a revoke deletes its row)', async () => {
  expect((await t.as(account.key).get('/v1/tasks')).status).toBe(200);
  const { store } = t.emulator.internals;
  store.transaction(() => store.driver.prepare('DELETE FROM keys WHERE key = ?').run(account.key));
  expect(statusAndCode(await t.as(account.key).get('/v1/tasks'))).toEqual([401, 'invalid_api_key']);
});

it('refuses a key made before a reset, and accepts the seeded key after it', async () => {
  expect((await t.as(account.key).get('/v1/tasks')).status).toBe(200);
  expect((await t.as(DEMO_KEY).get('/v1/tasks')).status).toBe(200);
  expect((await t.admin.post('/_emulator/reset')).status).toBe(200);
  expect(statusAndCode(await t.as(account.key).get('/v1/tasks'))).toEqual([401, 'invalid_api_key']);
  expect((await t.as(DEMO_KEY).get('/v1/tasks')).status).toBe(200);
});

it('takes keys and accounts from an imported state on the very next request', async () => {
  const restricted = await t.admin.post(`/_emulator/accounts/${account.id}/keys`, { models: ['svc-text-lite'] });
  const exported = (await t.admin.post('/_emulator/state/export')).body as Record<string, unknown>;
  const later = await newAccount(t);
  // Warm every key: the restricted one, one the import drops, and the account's own, which the import changes.
  expect(statusAndCode(await submit(restricted.body.key as string))).toEqual([403, 'permission_denied']);
  expect((await t.as(later.key).get('/v1/tasks')).status).toBe(200);
  expect((await t.as(account.key).get('/v1/tasks')).status).toBe(200);
  const keys = (exported['keys'] as { key: string; settings?: Record<string, unknown> }[]).map((k) =>
    k.key === restricted.body.key ? { ...k, settings: { ...k.settings, models: null } } : k.key === account.key ? { ...k, settings: { ...k.settings, models: ['video-gen-2.0-fast'] } } : k,
  );
  expect((await t.admin.post('/_emulator/state/import', { ...exported, keys })).status).toBe(200);
  expect(statusAndCode(await t.as(later.key).get('/v1/tasks'))).toEqual([401, 'invalid_api_key']);
  expect((await submit(restricted.body.key as string)).status).toBe(200);
  expect(statusAndCode(await submit(account.key))).toEqual([403, 'permission_denied']);
});

it('forgets a change that was rolled back, even one read inside its own transaction', async () => {
  expect((await submit(account.key)).status).toBe(200);
  const { db, store } = t.emulator.internals;
  expect(() =>
    store.transaction(() => {
      const key = db.keys.get(account.key);
      if (!key) throw new Error('no key');
      db.keys.put({ ...key, settings: { models: ['svc-text-lite'], quota: null, rpm: null, concurrency: null, signing_secret: null } });
      // Read back inside the transaction: what is remembered now is the change the rollback undoes.
      expect(db.keys.get(account.key)?.settings?.models).toEqual(['svc-text-lite']);
      throw new Error('roll back');
    }),
  ).toThrow('roll back');
  expect(db.keys.get(account.key)?.settings?.models ?? null).toBeNull();
  expect((await submit(account.key)).status).toBe(200);
});

it('hands every caller its own copy: changing what a read returned changes nothing stored', async () => {
  const { db } = t.emulator.internals;
  const first = db.keys.get(account.key);
  if (!first) throw new Error('no key');
  first.settings = { models: ['svc-text-lite'], quota: null, rpm: null, concurrency: null, signing_secret: null };
  expect(db.keys.get(account.key)?.settings?.models ?? null).toBeNull();
  expect((await submit(account.key)).status).toBe(200);
});

it('tells the tables a statement writes from its text, and counts anything else as writing them all', () => {
  expect(tablesWritten('SELECT body FROM keys WHERE key = ?')).toEqual([]);
  expect(tablesWritten('INSERT INTO keys (key, body) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body')).toContain('keys');
  expect(tablesWritten('UPDATE accounts SET body = ? WHERE id = ?')).toEqual(['accounts']);
  expect(tablesWritten('DELETE FROM "keys" WHERE key = ?')).toEqual(['keys']);
  expect(tablesWritten('INSERT OR REPLACE INTO main.accounts (id, body) VALUES (?, ?)')).toEqual(['accounts']);
  expect(tablesWritten('WITH gone AS (SELECT key FROM keys) DELETE FROM keys WHERE key IN gone')).toEqual(['keys']);
  expect(tablesWritten('VACUUM INTO ?')).toBe('all');
  expect(tablesWritten('PRAGMA user_version = 3')).toBe('all');
  expect(tablesWritten('CREATE TRIGGER t AFTER INSERT ON calls BEGIN DELETE FROM keys; END')).toBe('all');
  expect(controlsTransactionOnly('BEGIN IMMEDIATE')).toBe(true);
  expect(controlsTransactionOnly('RELEASE s1')).toBe(true);
  expect(controlsTransactionOnly('COMMIT')).toBe(true);
  expect(controlsTransactionOnly('ROLLBACK')).toBe(false);
  expect(controlsTransactionOnly('ROLLBACK TO s1; RELEASE s1')).toBe(false);
  expect(controlsTransactionOnly('BEGIN; DELETE FROM keys; COMMIT')).toBe(false);
});
