import { spawn } from 'node:child_process';
import { linkSync, renameSync, symlinkSync, unlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StoreOpenError } from '../../src/store/index.ts';
import { cliBin } from '../support/cli-build.ts';
import { DEMO_KEY, killAll, runCli, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';
import { socialNote } from '../support/harness.ts';
import { storeInProcess } from '../support/shared-in-process.ts';

/**
 * One writer per database file, whatever stands beside it: the running emulator is named by the store itself,
 * so a second start is refused even when the lock file beside the store was renamed or deleted, or the second
 * comes by another name of the file; readers (`store check`, `store backup`, a plain SQLite connection) are never
 * refused, and a killed emulator's store starts again at once. Real processes throughout: the claim is between
 * processes.
 */

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-writer-'));
  path = join(dir, 'store.db');
});
const started: ReturnType<typeof spawn>[] = [];
afterEach(async () => {
  killAll();
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const submit = (cli: CliEmulator): Promise<Response> =>
  fetch(`${cli.base}/v1/tasks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json', Connection: 'close' },
    body: JSON.stringify(socialNote()),
  });

/**
 * A second `start` on `db`: its exit code and lines once it ends, or 'served' once it listens (it is killed after
 * the test), so that a start that should have been refused fails the test instead of serving until the timeout.
 */
function secondStart(db: string): Promise<{ code: number | 'served'; lines: string[] }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliBin(), 'start', '--port', '0', '--db', db, '--clock', 'manual', '--log-level', 'warn'], { stdio: 'pipe' });
    started.push(child);
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/listening on/.test(output)) resolve({ code: 'served', lines: output.trim().split('\n') });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('close', (code) => resolve({ code: code ?? -1, lines: output.trim().split('\n') }));
  });
}

/** What stands beside the store once the first emulator runs: another name for it, and its lock file moved or gone. */
const BESIDE: [string, () => string][] = [
  [
    'its lock file renamed aside',
    () => {
      renameSync(`${path}.lock`, join(dir, 'elsewhere'));
      return path;
    },
  ],
  [
    'its lock file renamed to the lock file of another name',
    () => {
      renameSync(`${path}.lock`, join(dir, 'other.db.lock'));
      return path;
    },
  ],
  [
    'a hard link to the file, with the lock file deleted',
    () => {
      unlinkSync(`${path}.lock`);
      const link = join(dir, 'hard.db');
      linkSync(path, link);
      return link;
    },
  ],
  [
    'a hard link to the file, with the lock file renamed aside',
    () => {
      renameSync(`${path}.lock`, join(dir, 'elsewhere'));
      const link = join(dir, 'hard.db');
      linkSync(path, link);
      return link;
    },
  ],
  [
    'a symlink to the file, with the lock file renamed aside',
    () => {
      renameSync(`${path}.lock`, join(dir, 'elsewhere'));
      const link = join(dir, 'link.db');
      symlinkSync(path, link);
      return link;
    },
  ],
];

it.each(BESIDE)('refuses a second emulator on a running store with %s: one line naming the holder, exit 2; check and backup still work beside it', async (_name, change) => {
  const first = await startCli(['--db', path, '--clock', 'manual']);
  expect((await submit(first)).status).toBe(200);
  const second = await secondStart(change());
  expect(second).toEqual({ code: 2, lines: [expect.stringContaining(`the store is in use by process ${first.child.pid ?? '?'} on `)] });
  // The first keeps serving, and readers beside it are no writers (processes of their own for the first case; in
  // this process, beside it all the same, for the others).
  expect((await submit(first)).status).toBe(200);
  const store = change === BESIDE[0]?.[1] ? (args: string[]) => runCli(['store', ...args]) : storeInProcess;
  expect(await store(['check', '--db', path])).toMatchObject({ code: 0, stdout: expect.stringContaining('sound') });
  const backup = join(dir, 'backup.db');
  expect(await store(['backup', '--db', path, backup])).toMatchObject({ code: 0 });
  expect(await storeInProcess(['check', '--db', backup])).toMatchObject({ code: 0 });
  // Nor can a restore pull the store from under it.
  const restore = await storeInProcess(['restore', '--db', path, backup]).catch((err: unknown) => err);
  expect(restore).toBeInstanceOf(StoreOpenError);
  expect((restore as Error).message).toContain(`in use by process ${first.child.pid ?? '?'} on `);
});

it('starts at once on the store of a killed emulator whose lock file was renamed, beside a plain SQLite reader', async () => {
  const first = await startCli(['--db', path, '--clock', 'manual']);
  expect((await submit(first)).status).toBe(200);
  renameSync(`${path}.lock`, join(dir, 'elsewhere'));
  first.child.kill('SIGKILL');
  await first.exited;
  // A reader holding the file open (as sqlite3 would) is no emulator.
  const reader = new Database(path);
  try {
    expect((reader.prepare('SELECT count(*) FROM tasks').raw(true).get() as number[])[0]).toBe(1);
    const next = await startCli(['--db', path, '--clock', 'manual']);
    expect((await submit(next)).status).toBe(200);
    // The claim is the new emulator's: a start beside it is refused in its name.
    expect(await secondStart(path)).toEqual({ code: 2, lines: [expect.stringContaining(`in use by process ${next.child.pid ?? '?'} on `)] });
  } finally {
    reader.close();
  }
});

it('never lets two starts at the same instant in, by two names of one file', async () => {
  const seed = await startCli(['--db', path, '--clock', 'manual']);
  seed.child.kill('SIGTERM');
  expect(await seed.exited).toBe(0);
  const link = join(dir, 'hard.db');
  linkSync(path, link);
  // Two lock files (store.db.lock, hard.db.lock) and two logs (SQLite names each after the name that opened it).
  const starts = await Promise.all([secondStart(path), secondStart(link)]);
  expect(starts.map((s) => s.code)).not.toEqual(['served', 'served']);
  for (const refused of starts.filter((s) => s.code !== 'served')) {
    expect(refused).toEqual({ code: 2, lines: [expect.stringMatching(/the store is in use by process \d+/)] });
  }
});
