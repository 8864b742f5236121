import { existsSync, linkSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import { checkStoreFile, openStore, StoreOpenError } from '../../src/store/index.ts';
import { killAll, runCli, startCli } from '../support/cli.ts';
import { damageText, invalidUtf8, taskRow, truncatedJson } from '../support/damage.ts';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

/**
 * Damage never crashes the emulator and never passes silently; a store has one writer whatever path reaches it;
 * what is not a store is never opened as one. Each case is what a chaos campaign did to a store from outside.
 * In-process where a process boundary adds nothing (a libsql abort would take the test's process down with it,
 * which fails the test as surely); the real CLI where the exit code and the one line are the point.
 */

let dir: string;
let path: string;
const open: TestEmulator[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-damage-'));
  path = join(dir, 'store.db');
});
afterEach(async () => {
  killAll();
  for (const t of open.splice(0)) await t.close();
  await rm(dir, { recursive: true, force: true });
});


async function started(): Promise<TestEmulator> {
  const t = await startEmulator({ db: path });
  open.push(t);
  return t;
}

async function stop(t: TestEmulator): Promise<void> {
  open.splice(open.indexOf(t), 1);
  await t.close();
}

/** A store holding one task: finished (the clock moved an hour) or still queued. */
async function storeWithTask(finished: boolean): Promise<{ id: string; row: number }> {
  const t = await started();
  const submitted = await t.api.post('/v1/tasks', socialNote());
  expect(submitted.status).toBe(200);
  if (finished) expect((await t.admin.post('/_emulator/clock/advance', { seconds: 3600 })).status).toBe(200);
  await stop(t);
  const id = submitted.body.id as string;
  return { id, row: taskRow(path, id) };
}

/** Health once the check after the start has answered (it runs in a worker). */
async function healthAfterCheck(t: TestEmulator): Promise<{ status: number; body: Record<string, unknown> }> {
  let health = await t.admin.get('/_emulator/health');
  for (let i = 0; i < 250 && health.status === 200; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    health = await t.admin.get('/_emulator/health');
  }
  return health;
}

const DAMAGE = [
  ['one byte of invalid UTF-8', invalidUtf8('social-notes-data'), 'body is not valid UTF-8'],
  ['invalid JSON', truncatedJson, 'body is not valid JSON'],
] as const;

it.each(DAMAGE)('answers a task whose stored record has %s with the documented error, stays up, and says which row', async (_name, change, problem) => {
  const { id, row } = await storeWithTask(true);
  damageText(path, 'tasks', 'body', row, change);
  const t = await started();
  const res = await t.api.get(`/v1/tasks/${id}`);
  expect(res.status).toBe(500);
  expect(res.body.error).toMatchObject({ code: 'internal_error', message: expect.stringMatching(/store is damaged/), request_id: res.headers['x-request-id'] });
  // The list and the state export read the same row: the same answer, not a crash.
  expect((await t.api.get('/v1/tasks')).status).toBe(500);
  const exported = await t.admin.post('/_emulator/state/export');
  expect(exported.status).toBe(500);
  expect(exported.body.error.request_id).toBe(exported.headers['x-request-id']);
  // Still serving, and the check after the start names the row.
  expect((await t.api.get('/v1/models')).status).toBe(200);
  expect((await t.api.post('/v1/tasks', socialNote())).status).toBe(200);
  const health = await healthAfterCheck(t);
  expect(health.status).toBe(503);
  expect(String(health.body['store'])).toContain(`tasks row ${row}: ${problem}`);
  await stop(t);
  expect(checkStoreFile(path)).toContain(`tasks row ${row}: ${problem}`);
});

it.each(DAMAGE)('stops a start that must read a task whose record has %s, naming the row', async (_name, change, problem) => {
  const { row } = await storeWithTask(false);
  damageText(path, 'tasks', 'body', row, change);
  await expect(createEmulator({ db: path, clock: 'manual', log: () => undefined })).rejects.toThrow(StoreOpenError);
  await expect(createEmulator({ db: path, clock: 'manual', log: () => undefined })).rejects.toThrow(`tasks row ${row}: ${problem}`);
});

it('says so from the CLI without a stack trace: a start that reads a damaged row and an export (one line, exit 2), store check (exit 1)', async () => {
  const { row } = await storeWithTask(false);
  damageText(path, 'tasks', 'body', row, invalidUtf8('social-notes-data'));
  const start = await runCli(['start', '--port', '0', '--db', path, '--clock', 'manual']);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toEqual([expect.stringContaining(`tasks row ${row}: body is not valid UTF-8`)]);
  const check = await runCli(['store', 'check', '--db', path]);
  expect(check.code).toBe(1);
  expect(check.output).toContain(`tasks row ${row}: body is not valid UTF-8`);
  expect(check.output).not.toMatch(/\n\s+at /);
  const exported = await runCli(['store', 'export', '--db', path, join(dir, 'state.json')]);
  expect(exported.code).toBe(2);
  expect(exported.output.trim().split('\n')).toEqual([expect.stringContaining('tasks.body is not valid UTF-8')]);
});

it('finds damage in an index that the table pages do not show (store check and the check after the start)', async () => {
  const { row } = await storeWithTask(true);
  // The index entry for the row is left as it was while the row's indexed column changes under it.
  const db = new Database(path);
  const index = db.prepare("SELECT rootpage, sql FROM sqlite_schema WHERE name = 'tasks_by_account'").raw(true).get() as [number, string];
  db.exec("PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name = 'tasks_by_account'");
  db.close();
  const again = new Database(path);
  again.prepare('UPDATE tasks SET account_id = ? WHERE seq = ?').run('acct_elsewhere', row);
  again.exec('PRAGMA writable_schema = ON');
  again.prepare("INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) VALUES ('index', 'tasks_by_account', 'tasks', ?, ?)").run(index[0], index[1]);
  again.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  again.close();
  expect(checkStoreFile(path).join('\n')).toMatch(/missing from index tasks_by_account|wrong # of entries in index tasks_by_account/);
  const t = await started();
  const health = await healthAfterCheck(t);
  expect(health.status).toBe(503);
  expect(String(health.body['store'])).toMatch(/tasks_by_account/);
});

it.each([
  ['a file truncated to 0 bytes', async () => writeFile(path, ''), /the file is empty \(0 bytes\), not a store/],
  [
    "another program's SQLite database",
    async () => {
      const db = new Database(path);
      db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')");
      db.close();
    },
    /another program's SQLite database \(tables notes, schema version 0\)/,
  ],
  [
    'a SQLite database with another application id',
    async () => {
      const db = new Database(path);
      db.exec('PRAGMA application_id = 1234; CREATE TABLE accounts (id TEXT)');
      db.close();
    },
    /another program's SQLite database \(application id 1234\)/,
  ],
])('refuses %s and leaves it as it was', async (_name, make, message) => {
  await make();
  const before = readFileSync(path);
  expect(() => openStore({ path })).toThrow(message);
  expect(() => openStore({ path, readOnly: true })).toThrow(message);
  expect(readFileSync(path)).toEqual(before);
});

it('refuses a file that is not a store with one line, exit 2, from the CLI', async () => {
  await writeFile(path, '');
  const start = await runCli(['start', '--port', '0', '--db', path]);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toEqual([expect.stringMatching(/the file is empty \(0 bytes\), not a store/)]);
});

it('refuses a deleted store whose write-ahead log is still beside it, and makes a new store where nothing is', async () => {
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  const res = await fetch(`${cli.base}/v1/tasks`, {
    method: 'POST',
    headers: { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' },
    body: JSON.stringify(socialNote()),
  });
  expect(res.status).toBe(200);
  cli.child.kill('SIGKILL');
  await cli.exited;
  expect(existsSync(`${path}-wal`)).toBe(true);
  unlinkSync(path);
  const start = await runCli(['start', '--port', '0', '--db', path]);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toEqual([expect.stringContaining('the store is missing but its write-ahead log')]);
  // Nothing there at all: a new store, made whole before it takes the name.
  const fresh = join(dir, 'new', 'store.db');
  const store = openStore({ path: fresh });
  expect(store.meta.get('holder')).toMatchObject({ pid: process.pid });
  await store.close();
});

it.each([
  [
    'a symlink to it',
    (): string => {
      const link = join(dir, 'link.db');
      symlinkSync(path, link);
      return link;
    },
  ],
  [
    'a hard link to it',
    (): string => {
      const link = join(dir, 'hard.db');
      linkSync(path, link);
      return link;
    },
  ],
  [
    'its path, with the lock file beside it deleted',
    (): string => {
      unlinkSync(`${path}.lock`);
      return path;
    },
  ],
])('refuses a second emulator on the same store through %s with one line, exit 2, and the first keeps serving', async (_name, second) => {
  const first = await started();
  expect((await first.api.post('/v1/tasks', socialNote())).status).toBe(200);
  const start = await runCli(['start', '--port', '0', '--db', second(), '--clock', 'manual']);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toEqual([expect.stringContaining(`the store is in use by process ${process.pid}`)]);
  expect((await first.api.post('/v1/tasks', socialNote())).status).toBe(200);
});
