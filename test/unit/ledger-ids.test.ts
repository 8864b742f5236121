import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/billing/index.ts';
import type { StateDocument } from '../../src/state/index.ts';
import { openLibsql } from '../../src/store/libsql-driver.ts';
import { migrate } from '../../src/store/schema.ts';
import { checkStoreFile, checkStoreInBackground, openStore } from '../../src/store/index.ts';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { stateOnDisk } from '../support/state.ts';
import { storedAccount } from '../support/stored.ts';

/** Each account's ledger is numbered 1, 2, 3, … (`n`) beside the id every account shares (the order written). */

let dir: string;
const open: TestEmulator[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-ledger-ids-'));
});
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  await rm(dir, { recursive: true, force: true });
});

const started = async (options: Parameters<typeof startEmulator>[0] = {}): Promise<TestEmulator> => {
  const t = await startEmulator(options);
  open.push(t);
  return t;
};

const ledgerOf = async (t: TestEmulator, accountId: string): Promise<LedgerEntry[]> => {
  const res = await t.admin.get(`/_emulator/accounts/${accountId}/ledger`);
  expect(res.status).toBe(200);
  return res.body.data as LedgerEntry[];
};

const oneToN = (entries: unknown[]): number[] => entries.map((_, k) => k + 1);

/** Two accounts whose tasks alternate, so their ledger entries interleave; returns both ledgers. */
async function interleaved(t: TestEmulator): Promise<{ a: string; b: string }> {
  const a = await newAccount(t, '1000.000');
  const b = await newAccount(t, '1000.000');
  for (const key of [a.key, b.key, a.key, b.key, a.key]) {
    expect((await t.as(key).post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' })).status).toBe(200);
  }
  await t.admin.post('/_emulator/clock/advance', { seconds: 60 });
  return { a: a.id, b: b.id };
}

it("numbers an account's ledger 1, 2, 3, … while another account's entries come in between", async () => {
  const t = await started();
  const { a, b } = await interleaved(t);
  const ofA = await ledgerOf(t, a);
  const ofB = await ledgerOf(t, b);
  // A fund, three freezes and three charges; a fund, two of each.
  expect(ofA).toHaveLength(7);
  expect(ofB).toHaveLength(5);
  expect(ofA.map((e) => e.n)).toEqual(oneToN(ofA));
  expect(ofB.map((e) => e.n)).toEqual(oneToN(ofB));
  // The ids every account shares interleave: B's second entry was written between A's second and third.
  const [, a2, a3] = ofA.map((e) => e.id);
  const b2 = ofB[1]?.id ?? 0;
  expect(b2).toBeGreaterThan(a2 ?? Infinity);
  expect(b2).toBeLessThan(a3 ?? 0);
  // A page goes on after a number, oldest first.
  expect(t.emulator.internals.db.ledger.page(a, { after: 2, limit: 3 }).map((e) => e.n)).toEqual([3, 4, 5]);
  expect(t.emulator.internals.db.ledger.page(a, { limit: 2 })).toEqual(ofA.slice(0, 2));
  expect(t.emulator.internals.db.ledger.page(a, { after: 7, limit: 10 })).toEqual([]);
});

it('opens a store written before the numbers, numbering each account in the order written', async () => {
  const path = join(dir, 'store.db');
  // A store as schema version 1 left it: one id for every account's entries, no numbers.
  const driver = openLibsql(path);
  migrate(driver, path, 1);
  const insertAccount = driver.prepare('INSERT INTO accounts (id, body) VALUES (?, ?)');
  insertAccount.run('acct_a', JSON.stringify(storedAccount('acct_a', '106.000')));
  insertAccount.run('acct_b', JSON.stringify(storedAccount('acct_b', '55.000')));
  const insertEntry = driver.prepare('INSERT INTO ledger (id, account_id, kind, milli, body) VALUES (?, ?, ?, ?, ?)');
  const funds: [number, string, string][] = [[1, 'acct_a', '100.000'], [2, 'acct_b', '50.000'], [3, 'acct_a', '5.000'], [5, 'acct_b', '5.000'], [8, 'acct_a', '1.000']];
  for (const [id, account, points] of funds) {
    insertEntry.run(id, account, 'fund', Number(points) * 1000, JSON.stringify({ account_id: account, kind: 'fund', points, task_id: null, at: '2026-11-20T09:00:00+08:00' }));
  }
  driver.close();

  // Read without migrating (store check, store export): sound, and already numbered as the migration will.
  expect(checkStoreFile(path)).toEqual([]);
  expect(stateOnDisk(path).ledger.map((e) => [e.id, e.account_id, e.n])).toEqual([
    [1, 'acct_a', 1], [2, 'acct_b', 1], [3, 'acct_a', 2], [5, 'acct_b', 2], [8, 'acct_a', 3],
  ]);

  const t = await started({ db: path });
  expect((await ledgerOf(t, 'acct_a')).map((e) => [e.id, e.n, e.points])).toEqual([[1, 1, '100.000'], [3, 2, '5.000'], [8, 3, '1.000']]);
  expect((await ledgerOf(t, 'acct_b')).map((e) => [e.id, e.n, e.points])).toEqual([[2, 1, '50.000'], [5, 2, '5.000']]);
  // The next entry goes on from there: the next id of all, the next number of its account.
  const key = (await t.admin.post('/_emulator/accounts/acct_b/keys', {})).body.key as string;
  expect((await t.as(key).post('/v1/tasks', socialNote())).status).toBe(200);
  expect((await ledgerOf(t, 'acct_b')).at(-1)).toMatchObject({ id: 9, n: 3, kind: 'freeze' });
  await t.close();
  open.splice(0);
  expect(stateOnDisk(path).ledger).toHaveLength(6);
});

it('imports a state document written before the numbers, numbering each account in document order', async () => {
  const source = await started();
  const { a, b } = await interleaved(source);
  const exported = (await source.admin.post('/_emulator/state/export')).body as StateDocument;
  const old = { ...exported, ledger: exported.ledger.map(({ n: _n, ...entry }) => entry) };

  const target = await started();
  expect((await target.admin.post('/_emulator/state/import', old)).status).toBe(200);
  for (const account of [a, b, 'acct_demo']) {
    const entries = await ledgerOf(target, account);
    expect(entries.map((e) => e.n)).toEqual(oneToN(entries));
    expect(entries).toEqual(exported.ledger.filter((e) => e.account_id === account));
  }
});

it('exports the numbers and imports them back exactly', async () => {
  const source = await started();
  await interleaved(source);
  const exported = (await source.admin.post('/_emulator/state/export')).body as StateDocument;
  expect(exported.ledger.every((e) => Number.isInteger(e.n) && e.n > 0)).toBe(true);
  const target = await started();
  expect((await target.admin.post('/_emulator/state/import', exported)).status).toBe(200);
  const again = (await target.admin.post('/_emulator/state/export')).body as StateDocument;
  expect(again.ledger).toEqual(exported.ledger);
});

it('refuses a document whose ledger repeats a number in an account, with 422, and keeps the store as it was', async () => {
  const source = await started();
  const { a } = await interleaved(source);
  const exported = (await source.admin.post('/_emulator/state/export')).body as StateDocument;
  const ledger = exported.ledger.map((e) => (e.account_id === a && e.n === 3 ? { ...e, n: 2 } : e));
  const before = (await source.admin.post('/_emulator/state/export')).body as StateDocument;
  const res = await source.admin.post('/_emulator/state/import', { ...exported, ledger });
  expect(res.status).toBe(422);
  expect(res.body.error).toMatchObject({ code: 'invalid_params', message: expect.stringContaining(`repeats number 2 of account ${a}`) });
  expect(((await source.admin.post('/_emulator/state/export')).body as StateDocument).ledger).toEqual(before.ledger);
});

it('finds a gap in the ledger numbers of a store (store check, and the check after a start)', async () => {
  const path = join(dir, 'store.db');
  const t = await started({ db: path });
  const { a } = await interleaved(t);
  await t.close();
  open.splice(0);
  const raw = openStore({ path, readOnly: true });
  raw.driver.exec(`UPDATE ledger SET n = 9 WHERE account_id = '${a}' AND n = 7`);
  raw.close();
  expect(checkStoreFile(path)).toEqual([`account ${a}: 7 ledger entries, numbered 1 to 9`]);
  expect(await checkStoreInBackground(path)).toEqual([`account ${a}: 7 ledger entries, numbered 1 to 9`]);
});

// The repository keeps each account's next number while only its own appends write the table (a query fewer per
// freeze); whatever else writes it must make it count again.
it('numbers on without a gap or a repeat after a rolled-back append, a write of its own and a reset', async () => {
  const t = await started();
  const a = await newAccount(t, '100.000');
  const { db, store } = t.emulator.internals;
  const entry = { account_id: a.id, kind: 'fund' as const, points: '1.000', task_id: null, at: '2026-11-23T09:00:00+08:00' };
  const numbers = (): number[] => db.ledger.ofAccount(a.id).map((e) => e.n);
  expect(numbers()).toEqual([1]);
  store.transaction(() => db.ledger.append(entry));
  expect(() =>
    store.transaction(() => {
      expect(db.ledger.append(entry).n).toBe(3);
      throw new Error('rolled back');
    }),
  ).toThrow('rolled back');
  expect(store.transaction(() => db.ledger.append(entry)).n).toBe(3);
  // A write the repository did not make: the numbers are read again from the table.
  store.driver.prepare('DELETE FROM ledger WHERE account_id = ? AND n = 3').run(a.id);
  expect(store.transaction(() => db.ledger.append(entry)).n).toBe(3);
  expect(numbers()).toEqual([1, 2, 3]);
  // After a reset the account's ledger is gone: its next entry is number 1 again.
  expect((await t.admin.post('/_emulator/reset', {})).status).toBe(200);
  expect(store.transaction(() => db.ledger.append(entry)).n).toBe(1);
  expect(numbers()).toEqual([1]);
});
