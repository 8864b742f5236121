import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { openLibsql } from '../../src/store/libsql-driver.ts';
import { SCHEMA_VERSION } from '../../src/store/index.ts';

// A restart schedules the unfinished tasks a page at a time (issue 42, item 3): the first page before the start
// ends, the rest while the emulator already answers. Nothing of what follows may tell: an advance made at once
// moves every task, however late its page is scheduled, and concurrency counts every unfinished task at once.

const TASKS = 1_300;

let dir: string;
const open: TestEmulator[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-resume-'));
});
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  await rm(dir, { recursive: true, force: true });
});

async function storeOfQueued(db: string): Promise<{ account: string; key: string; ids: string[] }> {
  const t = await startEmulator({ db, clock: 'manual' });
  const account = await t.admin.post('/_emulator/accounts', { points: '1000000.000' });
  const key = (await t.admin.post(`/_emulator/accounts/${account.body.id}/keys`, {})).body.key as string;
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i += 50) {
    const answers = await Promise.all(Array.from({ length: Math.min(50, TASKS - i) }, () => t.as(key).post('/v1/tasks', socialNote())));
    for (const res of answers) {
      expect(res.status).toBe(200);
      ids.push(String(res.body.id));
    }
  }
  await t.close();
  return { account: String(account.body.id), key, ids };
}

it('moves every task of a full queue on an advance made as soon as the restarted emulator answers', async () => {
  const db = join(dir, 'store.db');
  const { ids, key } = await storeOfQueued(db);
  const t = await startEmulator({ db, clock: 'manual' });
  open.push(t);
  // In the turn the start ended in, before the later pages are scheduled: the advance waits for them. (The
  // default scenario: a second in the queue, then processing.)
  await t.emulator.clock.advanceSeconds(2);
  const counts = (await t.admin.get('/_emulator/tasks?status=processing&limit=1')).body;
  expect(counts.data).toHaveLength(1);
  for (const id of [ids[0], ids[600], ids[TASKS - 1]]) expect((await t.as(key).get(`/v1/tasks/${id}`)).body.status).toBe('processing');
  const queued = await t.admin.get('/_emulator/tasks?status=queued&limit=1');
  expect(queued.body.data).toEqual([]);
});

it('counts every unfinished task of a full queue toward the concurrency cap at once', async () => {
  const db = join(dir, 'store.db');
  const { account, key } = await storeOfQueued(db);
  const t = await startEmulator({ db, clock: 'manual' });
  open.push(t);
  const patched = await t.admin.send((r) =>
    r.patch(`/_emulator/accounts/${account}`).set({ Authorization: 'Bearer test-admin-token', 'Content-Type': 'application/json' }).send({ concurrency: TASKS + 1 }),
  );
  expect(patched.status).toBe(200);
  expect((await t.as(key).post('/v1/tasks', socialNote())).status).toBe(200);
  const refused = await t.as(key).post('/v1/tasks', socialNote());
  expect([refused.status, refused.body.error?.code]).toEqual([429, 'concurrency_limited']);
});

// Schema 5 keeps each task's key in a column, so that a start counts each key's unfinished tasks from an index
// instead of reading every task's JSON. A store from before it gets the column filled at its next start.
it('fills the key column of a store from before schema 5 at its next start, and counts each key from it', async () => {
  const db = join(dir, 'store.db');
  const first = await startEmulator({ db, clock: 'manual' });
  const account = await first.admin.post('/_emulator/accounts', { points: '1000.000' });
  const keys = [0, 1].map(async () => (await first.admin.post(`/_emulator/accounts/${account.body.id}/keys`, {})).body.key as string);
  const [busy, idle] = await Promise.all(keys);
  for (let i = 0; i < 3; i += 1) expect((await first.as(busy as string).post('/v1/tasks', socialNote())).status).toBe(200);
  await first.close();
  // Back to schema 4: no index, no column.
  const old = openLibsql(db);
  old.exec('DROP INDEX tasks_unfinished_holders; ALTER TABLE tasks DROP COLUMN key; PRAGMA user_version = 4');
  old.close();

  const t = await startEmulator({ db, clock: 'manual' });
  open.push(t);
  const { driver } = t.emulator.internals.store;
  expect(Number(driver.prepare('PRAGMA user_version').get()?.[0])).toBe(SCHEMA_VERSION);
  expect(driver.prepare('SELECT key, count(*) FROM tasks GROUP BY key').all()).toEqual([[busy, 3]]);
  const cap = (key: string) =>
    t.admin.send((r) => r.patch(`/_emulator/keys/${key}`).set({ Authorization: 'Bearer test-admin-token', 'Content-Type': 'application/json' }).send({ concurrency: 3 }));
  expect((await cap(busy as string)).status).toBe(200);
  expect((await cap(idle as string)).status).toBe(200);
  // The busy key already runs its three; the other none.
  const refused = await t.as(busy as string).post('/v1/tasks', socialNote());
  expect([refused.status, refused.body.error?.code]).toEqual([429, 'concurrency_limited']);
  expect((await t.as(idle as string).post('/v1/tasks', socialNote())).status).toBe(200);
  expect(driver.prepare('SELECT key, count(*) FROM tasks GROUP BY key ORDER BY 2').all()).toEqual([[idle, 1], [busy, 3]]);
});
