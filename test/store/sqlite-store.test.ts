import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createAccount } from '../../src/accounts/index.ts';
import { repositories } from '../../src/db.ts';
import { createRandom } from '../../src/random/index.ts';
import { openStore, StoreOpenError } from '../../src/store/index.ts';
import type { Store } from '../../src/store/index.ts';
import { killAll, runCli, startCli } from '../support/cli.ts';
import { socialNote, startEmulator } from '../support/harness.ts';
import { storeInProcess } from '../support/shared-in-process.ts';
import { stateOnDisk } from '../support/state.ts';

/** The store's own promises: all-or-nothing transactions, effects after commit, one writer, loud damage. */

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-sqlite-'));
  path = join(dir, 'store.db');
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});


const fundedStore = (points = '100.000'): Store => {
  const store = openStore({ path });
  store.transaction(() => createAccount(repositories(store), createRandom('s'), 0, { id: 'acct_a', points }));
  return store;
};

it('rolls a throwing transaction back whole: no balance moved, no ledger entry, no effect run', () => {
  const store = fundedStore();
  const db = repositories(store);
  const effects: string[] = [];
  expect(() =>
    store.transaction(() => {
      const account = db.accounts.get('acct_a');
      if (!account) throw new Error('no account');
      db.accounts.put({ ...account, available: '0.000' });
      db.ledger.append({ account_id: 'acct_a', kind: 'freeze', points: '100.000', task_id: null, at: 'x' });
      store.afterCommit(() => effects.push('sent'));
      throw new Error('halfway');
    }),
  ).toThrow('halfway');
  expect(db.accounts.get('acct_a')?.available).toBe('100.000');
  expect(db.ledger.ofAccount('acct_a').map((e) => e.kind)).toEqual(['fund']);
  expect(effects).toEqual([]);
  store.close();
});

it('rolls back a nested transaction alone, and runs the effects of what committed after the commit, in order', () => {
  const store = fundedStore();
  const db = repositories(store);
  const seen: string[] = [];
  store.transaction(() => {
    store.afterCommit(() => seen.push(`outer sees ${db.accounts.get('acct_a')?.webhook_url ?? 'none'}`));
    const account = db.accounts.get('acct_a');
    if (account) db.accounts.put({ ...account, webhook_url: 'https://a.example/hook' });
    expect(() =>
      store.transaction(() => {
        db.accounts.put({ ...(db.accounts.get('acct_a') as NonNullable<typeof account>), webhook_url: 'https://b.example/hook' });
        store.afterCommit(() => seen.push('inner, rolled back'));
        throw new Error('inner');
      }),
    ).toThrow('inner');
    store.transaction(() => store.afterCommit(() => seen.push('inner, kept')));
    seen.push('before commit');
  });
  expect(seen).toEqual(['before commit', 'outer sees https://a.example/hook', 'inner, kept']);
  store.close();
});

it('refuses a transaction that would span an await, and keeps nothing of it', () => {
  const store = fundedStore();
  const db = repositories(store);
  expect(() =>
    store.transaction(() => {
      db.accounts.put({ ...(db.accounts.get('acct_a') as NonNullable<ReturnType<typeof db.accounts.get>>), available: '1.000' });
      return Promise.resolve();
    }),
  ).toThrow(/cannot span an await/);
  expect(db.accounts.get('acct_a')?.available).toBe('100.000');
  store.close();
});

it('refuses a second emulator on the same store with one line naming the holder, exit 2, and the first keeps serving', async () => {
  // The first emulator in this process (the holder is this process), the second the real CLI: two processes, as
  // the lock is between processes; only the refused one needs its exit code and its line.
  const first = await startEmulator({ db: path });
  try {
    const second = await runCli(['start', '--port', '0', '--db', path]);
    expect(second.code).toBe(2);
    expect(second.output.trim().split('\n')).toHaveLength(1);
    expect(second.output).toContain(`the store is in use by process ${process.pid}`);
    expect((await first.admin.get('/_emulator/health')).status).toBe(200);
    expect((await first.api.post('/v1/tasks', socialNote())).status).toBe(200);
  } finally {
    await first.close();
  }
});

it('stops the start of a store with damaged pages it reads (the ledger), with one line saying so, exit 2', async () => {
  const store = fundedStore();
  const db = repositories(store);
  store.transaction(() => {
    for (let i = 0; i < 200; i += 1) db.ledger.append({ account_id: 'acct_b', kind: 'fund', points: '1.000', task_id: null, at: 'x'.repeat(200) });
  });
  store.driver.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  // A page of the ledger's entries, in the middle of them (where it falls in the file depends on the schema).
  const leaves = store.driver.prepare("SELECT pageno FROM dbstat WHERE name = 'ledger' AND pagetype = 'leaf' ORDER BY pageno").all();
  expect(leaves.length).toBeGreaterThan(8);
  const page = Number(leaves[Math.floor(leaves.length / 2)]?.[0]);
  await store.close();
  // Garbage over that page.
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, (page - 1) * 4096);
  closeSync(fd);
  const start = await runCli(['start', '--port', '0', '--db', path]);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toHaveLength(1);
  expect(start.output).toMatch(/store\.db: the store is damaged .*svc-emulator store check/);
  // The store command's check on the same file (in this process: a crash on the damaged pages throws here, where
  // the CLI would print a stack trace; `store check` through the process, exit 1 and its lines: 'says what is wrong
  // with a damaged store').
  const check = await storeInProcess(['check', '--db', path]);
  expect(check.code).toBe(1);
  expect(check.output).toContain('damaged');
  expect(check.output).not.toMatch(/\n\s+at /);
});

it('finds a balance that no longer agrees with its ledger (one digit changed) once the store is open', async () => {
  await fundedStore('10000.000').close();
  const raw = openStore({ path, readOnly: true });
  raw.driver.exec(`UPDATE accounts SET body = json_set(body, '$.available', '20000.000') WHERE id = 'acct_a'`);
  await raw.close();
  const check = await storeInProcess(['check', '--db', path]);
  expect(check.code).toBe(1);
  expect(check.output).toContain('account acct_a: available is 20000.000, its ledger says 10000.000');
});

it('refuses a store of a newer schema than it understands, and a file that is no store', async () => {
  fundedStore().close();
  const raw = openStore({ path, readOnly: true });
  raw.driver.exec('PRAGMA user_version = 99');
  raw.close();
  expect(() => openStore({ path })).toThrow(/schema version 99 is newer than this emulator understands/);
  const other = join(dir, 'notes.txt');
  await writeFile(other, 'hello, not a database');
  expect(() => openStore({ path: other })).toThrow(/not a store file/);
});

it('checks the store after it starts: health answers 503 damaged, naming the problem', async () => {
  fundedStore('10000.000').close();
  const raw = openStore({ path, readOnly: true });
  raw.driver.exec(`UPDATE accounts SET body = json_set(body, '$.frozen', '5.000') WHERE id = 'acct_a'`);
  raw.close();
  const t = await startEmulator({ db: path, log: () => undefined });
  try {
    let health = await t.admin.get('/_emulator/health');
    for (let i = 0; i < 100 && health.status === 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      health = await t.admin.get('/_emulator/health');
    }
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'damaged', store: expect.stringMatching(/account acct_a: frozen is 5\.000, its ledger says 0\.000/) });
  } finally {
    await t.close();
  }
});

it('checks, backs up while running, refuses to restore while running, and restores once stopped (store CLI)', async () => {
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  const submit = async (): Promise<string> => {
    const res = await fetch(`${cli.base}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' },
      body: JSON.stringify(socialNote()),
    });
    return ((await res.json()) as { id: string }).id;
  };
  const kept = await submit();
  // The emulator is a process of its own; the check and the refused restore run the store command in this one (a
  // process beside the running emulator all the same), the backup and the restore through the CLI.
  expect(await storeInProcess(['check', '--db', path])).toMatchObject({ code: 0, output: expect.stringContaining('sound') });
  const backup = join(dir, 'backup.db');
  expect((await runCli(['store', 'backup', '--db', path, backup])).code).toBe(0);
  const later = await submit();
  // The CLI prints this refusal as one line, exit 2 (src/cli/main.ts, as for every StoreOpenError).
  const refused = await storeInProcess(['restore', '--db', path, backup]).then(
    () => null,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(StoreOpenError);
  expect((refused as Error).message).toContain(`in use by process ${cli.child.pid ?? '?'}`);
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
  expect((await runCli(['store', 'restore', '--db', path, backup])).code).toBe(0);
  const ids = stateOnDisk(path).tasks.map((t) => t.task.id);
  expect(ids).toContain(kept);
  expect(ids).not.toContain(later);
}); // three processes one after another (start, backup, restore): the default margin, which grows on a busy machine

it('says what is wrong with a damaged store (store check exits 1)', async () => {
  fundedStore().close();
  const raw = openStore({ path, readOnly: true });
  raw.driver.exec(`UPDATE accounts SET body = json_set(body, '$.charged', '1.000') WHERE id = 'acct_a'`);
  raw.close();
  const check = await runCli(['store', 'check', '--db', path]);
  expect(check.code).toBe(1);
  expect(check.output).toContain('account acct_a: charged is 1.000, its ledger says 0.000');
}, 180_000);

it('writes later jobs in one transaction a moment later (at once when hurried), before any other transaction, before a read that asks, and before closing', async () => {
  const failures: unknown[] = [];
  const store = openStore({ onEffectError: (err) => failures.push(err) });
  const { driver } = store;
  driver.exec('CREATE TABLE IF NOT EXISTS later_test (n INTEGER)');
  const count = (): number => Number(driver.prepare('SELECT count(*) FROM later_test').get()?.[0]);
  const insert = (n: number) => () => void driver.prepare('INSERT INTO later_test (n) VALUES (?)').run(n);
  const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  // They wait for others to share their commit: not written on the next turn, but a few milliseconds on.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    store.later(insert(1));
    store.later(insert(2));
    expect(count()).toBe(0);
    await nextTurn();
    expect(count()).toBe(0);
    vi.advanceTimersByTime(5);
    expect(count()).toBe(2);
  } finally {
    vi.useRealTimers();
  }
  // Hurried (many are waiting): on the next turn.
  store.later(insert(21));
  store.hurry();
  await nextTurn();
  expect(count()).toBe(3);
  driver.exec('DELETE FROM later_test WHERE n = 21');

  // Another transaction commits what was due first, even when it rolls back itself.
  store.later(insert(3));
  expect(() =>
    store.transaction(() => {
      insert(4)();
      throw new Error('rolled back');
    }),
  ).toThrow('rolled back');
  expect(count()).toBe(3);

  // A failing job leaves the others' writes.
  store.later(() => {
    throw new Error('one job fails');
  });
  store.later(insert(5));
  store.flushLater();
  expect(count()).toBe(4);
  expect(failures).toEqual([new Error('one job fails')]);

  let ranBeforeClose = false;
  store.later(() => {
    insert(6)();
    ranBeforeClose = count() === 5;
  });
  await store.close();
  expect(ranBeforeClose).toBe(true);
});
