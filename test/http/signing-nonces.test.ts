import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { signRequest } from '../../src/keys/index.ts';
import { openLibsql } from '../../src/store/libsql-driver.ts';
import { migrate } from '../../src/store/schema.ts';
import { SCHEMA_VERSION } from '../../src/store/index.ts';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// The nonces of signed requests are kept in the store, each until its timestamp's window closes on the wall
// clock, and swept hourly on the emulator's clock once it has: the table holds what a replay could still use.

let t: TestEmulator | null = null;
let dir: string | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await t?.close();
  t = null;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = null;
});

/** A key with signing on, and a signed `GET /v1/tasks` of it with this nonce and timestamp. */
async function signingKey(e: TestEmulator) {
  const account = await newAccount(e);
  const res = await e.admin.post(`/_emulator/accounts/${account.id}/keys`, { signing: true });
  const { key, signing_secret: secret } = res.body as { key: string; signing_secret: string };
  const get = (nonce: string, timestamp: number) =>
    e.api.send((r) => r.get('/v1/tasks').set({ Authorization: `Bearer ${key}`, ...signRequest({ secret, method: 'GET', path: '/v1/tasks', nonce, timestamp }) }));
  return { key, get };
}

const storedNonces = (e: TestEmulator): [string, number][] =>
  e.emulator.internals.store.driver
    .prepare('SELECT nonce, expires_ms FROM nonces ORDER BY nonce')
    .all()
    .map(([nonce, expires]) => [String(nonce), Number(expires)]);
const advance = (e: TestEmulator, seconds: number) => e.admin.post('/_emulator/clock/advance', { seconds });

it('keeps each nonce until its window closes and drops it at the first hourly sweep after', async () => {
  const wall = Date.parse('2026-11-23T01:00:00Z');
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(wall);
  t = await startEmulator();
  const { get } = await signingKey(t);
  const seconds = wall / 1000;
  expect((await get('older-nonce-1', seconds - 200)).status).toBe(200);
  expect((await get('newer-nonce-1', seconds)).status).toBe(200);
  // Each until its timestamp + 300 s, on the wall clock.
  expect(storedNonces(t)).toEqual([['newer-nonce-1', wall + 300_000], ['older-nonce-1', wall + 100_000]]);
  // A state document carries no nonces, and an import keeps them: the same bytes are still refused after one.
  const exported = (await t.admin.post('/_emulator/state/export')).body as Record<string, unknown>;
  expect(Object.keys(exported).filter((name) => /nonce/i.test(name))).toEqual([]);
  expect((await t.admin.post('/_emulator/state/import', exported)).status).toBe(200);
  expect((await get('newer-nonce-1', seconds)).body.error?.code).toBe('nonce_reused');

  // The emulator's clock alone drops nothing: the windows are on the wall clock.
  await advance(t, 3600);
  expect(storedNonces(t).map(([nonce]) => nonce)).toEqual(['newer-nonce-1', 'older-nonce-1']);
  vi.setSystemTime(wall + 150_000);
  await advance(t, 3600);
  expect(storedNonces(t).map(([nonce]) => nonce)).toEqual(['newer-nonce-1']);
  vi.setSystemTime(wall + 301_000);
  await advance(t, 3600);
  expect(storedNonces(t)).toEqual([]);
});

it('gives a store from before the nonces (schema 3) their table at its next start', async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-nonces-'));
  const path = join(dir, 'store.db');
  const driver = openLibsql(path);
  migrate(driver, path, 3);
  driver.close();
  t = await startEmulator({ db: path });
  expect(Number(t.emulator.internals.store.driver.prepare('PRAGMA user_version').get()?.[0])).toBe(SCHEMA_VERSION);
  const { get } = await signingKey(t);
  const now = Math.floor(Date.now() / 1000);
  expect((await get('first-use-1', now)).status).toBe(200);
  expect((await get('first-use-1', now)).body.error?.code).toBe('nonce_reused');
  expect(storedNonces(t).map(([nonce]) => nonce)).toEqual(['first-use-1']);
});
