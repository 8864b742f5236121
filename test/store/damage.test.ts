import { spawn } from 'node:child_process';
import { existsSync, linkSync, symlinkSync, unlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { killAll, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';
import { damageText, invalidUtf8, taskRow, truncatedJson } from '../support/damage.ts';
import { socialNote } from '../support/harness.ts';

/**
 * Damage never crashes the emulator and never passes silently; a store has one writer whatever path reaches it;
 * what is not a store is never opened as one. Each case is what a chaos campaign did to a store from outside.
 */

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-damage-'));
  path = join(dir, 'store.db');
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

const BIN = new URL('../../bin/svc-emulator.js', import.meta.url).pathname;
const KEY = { Authorization: 'Bearer sk-emulator-demo' };
const ADMIN = { Authorization: 'Bearer cli-admin' };

function runCli(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), output }));
  });
}

async function submit(cli: CliEmulator): Promise<string> {
  const res = await fetch(`${cli.base}/v1/tasks`, { method: 'POST', headers: { ...KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(socialNote()) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function stop(cli: CliEmulator): Promise<void> {
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
}

/** A store holding one task: finished (the clock moved an hour) or still queued. */
async function storeWithTask(finished: boolean): Promise<{ id: string; row: number }> {
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  const id = await submit(cli);
  if (finished) {
    const advanced = await fetch(`${cli.base}/_emulator/clock/advance`, { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: '{"seconds":3600}' });
    expect(advanced.status).toBe(200);
  }
  await stop(cli);
  return { id, row: taskRow(path, id) };
}

const DAMAGE = [
  ['one byte of invalid UTF-8', invalidUtf8('social-notes-data'), 'body is not valid UTF-8'],
  ['invalid JSON', truncatedJson, 'body is not valid JSON'],
] as const;

it.each(DAMAGE)('answers a task whose stored record has %s with the documented error, stays up, and says which row', async (_name, change, problem) => {
  const { id, row } = await storeWithTask(true);
  damageText(path, 'tasks', 'body', row, change);
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  const res = await fetch(`${cli.base}/v1/tasks/${id}`, { headers: KEY });
  expect(res.status).toBe(500);
  const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code).toBe('internal_error');
  expect(body.error.message).toMatch(/store is damaged/);
  expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
  // The list reads the same row: the same answer, not a crash.
  expect((await fetch(`${cli.base}/v1/tasks`, { headers: KEY })).status).toBe(500);
  const exported = await fetch(`${cli.base}/_emulator/state/export`, { method: 'POST', headers: ADMIN });
  expect(exported.status).toBe(500);
  expect(((await exported.json()) as { error: { request_id: string } }).error.request_id).toBe(exported.headers.get('x-request-id'));
  // Still serving, and the check after the start names the row.
  expect((await fetch(`${cli.base}/v1/models`, { headers: KEY })).status).toBe(200);
  await submit(cli);
  await cli.printed(new RegExp(`tasks row ${row}: ${problem}`));
  const health = await fetch(`${cli.base}/_emulator/health`);
  expect(health.status).toBe(503);
  expect(((await health.json()) as { store: string }).store).toContain(`tasks row ${row}: ${problem}`);
  await stop(cli);
  const check = await runCli(['store', 'check', '--db', path]);
  expect(check.code).toBe(1);
  expect(check.output).toContain(`tasks row ${row}: ${problem}`);
  expect(check.output).not.toMatch(/\n\s+at /);
});

it.each(DAMAGE)('stops a start that must read a task whose record has %s: one line naming the row, exit 2', async (_name, change, problem) => {
  const { row } = await storeWithTask(false);
  damageText(path, 'tasks', 'body', row, change);
  const start = await runCli(['start', '--port', '0', '--db', path, '--clock', 'manual']);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toHaveLength(1);
  expect(start.output).toContain(`tasks row ${row}: ${problem}`);
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
  const check = await runCli(['store', 'check', '--db', path]);
  expect(check.code).toBe(1);
  expect(check.output).toMatch(/missing from index tasks_by_account|wrong # of entries in index tasks_by_account/);
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  await cli.printed(/tasks_by_account/);
  expect((await fetch(`${cli.base}/_emulator/health`)).status).toBe(503);
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
])('refuses %s with one line, exit 2, and leaves it as it was', async (_name, make, message) => {
  await make();
  const before = await import('node:fs/promises').then((fs) => fs.readFile(path));
  const start = await runCli(['start', '--port', '0', '--db', path]);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toHaveLength(1);
  expect(start.output).toMatch(message);
  expect(await import('node:fs/promises').then((fs) => fs.readFile(path))).toEqual(before);
});

it('refuses a deleted store whose write-ahead log is still beside it, and makes a new store where nothing is', async () => {
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  await submit(cli);
  cli.child.kill('SIGKILL');
  await cli.exited;
  expect(existsSync(`${path}-wal`)).toBe(true);
  unlinkSync(path);
  const start = await runCli(['start', '--port', '0', '--db', path]);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toHaveLength(1);
  expect(start.output).toContain('the store is missing but its write-ahead log');
  const fresh = await startCli(['--db', join(dir, 'new', 'store.db'), '--clock', 'manual']);
  await submit(fresh);
  await stop(fresh);
});

it.each([
  ['a symlink to it', (): string => {
    const link = join(dir, 'link.db');
    symlinkSync(path, link);
    return link;
  }],
  ['a hard link to it', (): string => {
    const link = join(dir, 'hard.db');
    linkSync(path, link);
    return link;
  }],
  ['its path, with the lock file beside it deleted', (): string => {
    unlinkSync(`${path}.lock`);
    return path;
  }],
])('refuses a second emulator on the same store through %s, and the first keeps serving', async (_name, second) => {
  const first = await startCli(['--db', path, '--clock', 'manual']);
  await submit(first);
  const other = second();
  const start = await runCli(['start', '--port', '0', '--db', other, '--clock', 'manual']);
  expect(start.code).toBe(2);
  expect(start.output.trim().split('\n')).toHaveLength(1);
  expect(start.output).toContain(`the store is in use by process ${String(first.child.pid)}`);
  await submit(first);
  await stop(first);
});
