import { appendFile, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { emptyData, loadStoreFile, openStore } from '../../src/store/index.ts';
import type { Store, StoreData } from '../../src/store/index.ts';
import { storedAccount as account } from '../support/stored.ts';

/**
 * The file store's journal: a commit appends only what changed, a reload replays it, a torn last line is
 * dropped, compaction folds it into a snapshot while writes go on, and stores of the earlier single-document
 * format are converted.
 */

let dir: string;
let db: string;
const open: Store[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-journal-'));
  db = join(dir, 'db.json');
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

const openAt = async (options: { compactAfterBytes?: number } = {}): Promise<Store> => {
  const store = await openStore({ path: db, ...options });
  open.push(store);
  return store;
};

const journalText = async (): Promise<string> => {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.journal')).sort();
  return (await Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')))).join('');
};

it('appends only the entries a commit changed, at any depth', async () => {
  const store = await openAt();
  for (let i = 0; i < 50; i += 1) store.data.accounts[`acct_${i}`] = account(`acct_${i}`);
  await store.commit();
  const before = (await journalText()).length;

  const target = store.data.accounts['acct_7'];
  if (!target) throw new Error('missing');
  target.available = '3.500';
  store.data.ledger.push({ id: 1 } as unknown as StoreData['ledger'][number]);
  await store.commit();

  const line = (await journalText()).slice(before).trim();
  const operations = JSON.parse(line) as unknown[][];
  expect(operations.map((o) => `${String(o[0])}/${String(o[1])}`).sort()).toEqual(['accounts/acct_7', 'ledger/0']);
  expect((await loadStoreFile(db)).data.accounts['acct_7']?.available).toBe('3.500');
});

it('replays deletes, nested changes and values built by spreading stored objects', async () => {
  const store = await openAt();
  store.data.accounts['a'] = account('a');
  store.data.accounts['b'] = account('b');
  store.data.seq = 41;
  await store.commit();
  const a = store.data.accounts['a'];
  if (!a) throw new Error('missing');
  // A new entry made from a stored one must not drag the old entry's proxies into the data.
  store.data.accounts['c'] = { ...a, id: 'c', previous_secrets: [{ secret: 's', until_ms: 1 }] };
  delete store.data.accounts['b'];
  store.data.accounts['c'].previous_secrets?.push({ secret: 't', until_ms: 2 });
  store.data.seq += 1;
  await store.commit();

  const loaded = (await loadStoreFile(db)).data;
  expect(Object.keys(loaded.accounts)).toEqual(['a', 'c']);
  expect(loaded.accounts['c']?.previous_secrets).toEqual([
    { secret: 's', until_ms: 1 },
    { secret: 't', until_ms: 2 },
  ]);
  expect(loaded.seq).toBe(42);
  // Changing the new entry later marks it, not the entry it was copied from.
  const c = store.data.accounts['c'];
  if (!c) throw new Error('missing');
  c.available = '1.000';
  await store.commit();
  const last = (await journalText()).trim().split('\n').at(-1) ?? '';
  expect(JSON.parse(last)).toEqual([['accounts', 'c', { ...loaded.accounts['c'], available: '1.000' }]]);
});

it('keeps ids such as __proto__ as ids, through a reload', async () => {
  const store = await openAt();
  store.data.idempotency['__proto__'] = { task_id: 't', model: 'm', input: '{}' };
  await store.commit();
  const loaded = (await loadStoreFile(db)).data;
  expect(Object.hasOwn(loaded.idempotency, '__proto__')).toBe(true);
  expect(Object.getPrototypeOf(loaded.idempotency)).toBe(Object.prototype);
  expect(({} as Record<string, unknown>)['task_id']).toBeUndefined();
});

it('drops a torn last line and refuses a damaged line before it', async () => {
  const store = await openAt();
  store.data.accounts['a'] = account('a');
  await store.commit();
  await store.close();
  const journal = (await readdir(dir)).find((n) => n.endsWith('.journal')) ?? '';
  // A crash in the middle of an append leaves half a line.
  await appendFile(join(dir, journal), '[["accounts","b",{"id":"b","avail');
  const loaded = await loadStoreFile(db);
  expect(Object.keys(loaded.data.accounts)).toEqual(['a']);

  // A store opened on it journals to a new file, so the torn half is never continued.
  const reopened = await openAt();
  reopened.data.accounts['z'] = account('z');
  await reopened.commit();
  expect(Object.keys((await loadStoreFile(db)).data.accounts)).toEqual(['a', 'z']);

  await writeFile(join(dir, journal), '[["accounts","b",{"id":\n[["accounts","c",{}]]\n');
  await expect(loadStoreFile(db)).rejects.toThrow(/damaged journal line/);
});

it('compacts into a snapshot while commits go on, losing none of them', async () => {
  const store = await openAt({ compactAfterBytes: 20_000 });
  const writes: Promise<void>[] = [];
  for (let i = 0; i < 400; i += 1) {
    store.data.accounts[`acct_${i}`] = account(`acct_${i}`, `${i}.000`);
    if (i % 3 === 0) delete store.data.accounts[`acct_${i - 1}`];
    writes.push(store.commit());
    if (i % 50 === 0) await store.commit();
  }
  await Promise.all(writes);
  await store.compact();
  store.data.accounts['late'] = account('late');
  await store.commit();

  expect(store.stats().compactions).toBeGreaterThanOrEqual(2);
  const files = await readdir(dir);
  // Journals the snapshot covers are gone.
  expect(files.filter((n) => n.endsWith('.journal'))).toHaveLength(1);
  const snapshot = (await readFile(db, 'utf8')).split('\n')[0] ?? '';
  expect(JSON.parse(snapshot)).toMatchObject({ format: 'svc-emulator-store', version: 1 });

  const expected = JSON.parse(JSON.stringify(store.data)) as StoreData;
  expect((await loadStoreFile(db)).data).toEqual(expected);
});

it('converts a store of the earlier single-document format on open', async () => {
  const legacy = { ...emptyData(), seq: 7, accounts: { acct_old: account('acct_old', '99.000') } };
  await writeFile(db, JSON.stringify(legacy));
  const store = await openAt();
  expect(store.data.accounts['acct_old']?.available).toBe('99.000');
  expect(JSON.parse((await readFile(db, 'utf8')).split('\n')[0] ?? '')).toMatchObject({ format: 'svc-emulator-store' });
  expect((await loadStoreFile(db)).data).toEqual(JSON.parse(JSON.stringify(store.data)));
});

it('refuses a store written by a newer emulator', async () => {
  await writeFile(db, JSON.stringify({ ...emptyData(), schema_version: 99 }));
  await expect(openStore({ path: db })).rejects.toThrow(/newer than this emulator/);
});

it('replace (reset) leaves exactly the new data on disk', async () => {
  const store = await openAt();
  store.data.accounts['a'] = account('a');
  await store.commit();
  await store.replace({ ...emptyData(), accounts: { fresh: account('fresh') } });
  expect(Object.keys((await loadStoreFile(db)).data.accounts)).toEqual(['fresh']);
});

it('keeps the entries of a failed write (disk full) for the next write, and leaves no half line behind', async () => {
  const store = await openAt();
  store.data.accounts['before'] = account('before');
  await store.commit();
  // The next journal generation is a full disk: every write to it fails with ENOSPC.
  const generation = store.stats().generation + 1;
  await symlink('/dev/full', join(dir, `db.json.${generation}.journal`));
  await store.compact();
  store.data.accounts['lost'] = account('lost');
  await expect(store.commit()).rejects.toThrow(/ENOSPC|no space/i);

  // A new generation on a good file: its first write carries the entry the failed write had.
  store.data.accounts['after'] = account('after');
  await store.compact();
  const next = (await readdir(dir)).find((n) => n === `db.json.${generation + 1}.journal`) ?? '';
  const written = (await readFile(join(dir, next), 'utf8'))
    .trim()
    .split('\n')
    .flatMap((line) => (JSON.parse(line) as string[][]).map((o) => `${o[0]}/${o[1]}`));
  expect(written).toEqual(expect.arrayContaining(['accounts/lost', 'accounts/after']));
  expect(Object.keys((await loadStoreFile(db)).data.accounts).sort()).toEqual(['after', 'before', 'lost']);
});
