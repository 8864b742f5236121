import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { checkStore } from './check-run.ts';
import { StoreDamagedError, StoreOpenError } from './open-error.ts';
import { readStore } from './open.ts';
import { takeStoreLock } from './writer.ts';

/**
 * What `svc-emulator store check|backup|restore` do. Check and backup read the file through a read-only
 * connection, beside a running emulator too (SQLite readers never block its writer) and without ever copying the
 * log into the file or removing it; restore takes the store, so it is refused while one runs.
 */

const logNotRead = (path: string): string =>
  `(the rest of the check reads the store through SQLite, which would drop those transactions: not run; the files are left as they were; to open the store without those transactions, move ${path}-wal and ${path}-shm aside)`;

/**
 * The store check (check.ts) on a file; empty when the store is sound. A write-ahead log SQLite would not replay
 * whole is the answer alone: the rest of the check reads through SQLite, which would show the store without the
 * lost transactions, and the files are left as they are for whoever restores them.
 */
export function checkStoreFile(path: string): string[] {
  let store;
  try {
    store = readStore(path);
  } catch (err) {
    if (!(err instanceof StoreDamagedError)) throw err;
    // Damage SQLite itself refuses, or a log it would not replay whole (then the files are left as they are).
    return err.inLog ? [err.problem, logNotRead(path)] : [err.problem];
  }
  try {
    return checkStore(store.driver);
  } finally {
    void store.close();
  }
}

/** A consistent copy of the store as of one instant, compacted, in one file (`VACUUM INTO`). */
export function backupStore(path: string, target: string): void {
  if (existsSync(target)) throw new StoreOpenError(`${target}: already exists; a backup never overwrites a file`);
  const store = readStore(path);
  try {
    store.driver.prepare('VACUUM INTO ?').run(target);
  } catch (err) {
    // The target's side (no such folder, no room, no permission): one line. A damaged store reads as the store's damage.
    const code = String((err as { code?: unknown } | null)?.code ?? '');
    if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR')) {
      rmSync(target, { force: true });
      throw new StoreOpenError(`${target}: the backup cannot be written (${(err as Error).message})`);
    }
    throw err;
  } finally {
    void store.close();
  }
}

/** Replaces the store with a backup, once the backup passes the full check. */
export function restoreStore(path: string, backup: string): void {
  const problems = checkStoreFile(backup);
  if (problems.length > 0) throw new StoreOpenError(`${backup}: not restored, the backup is damaged (${problems.slice(0, 3).join('; ')})`);
  // The lock alone, held while the files are swapped: a restore never pulls the store from under a running
  // emulator, and no connection of this process has the old file open.
  const lock = takeStoreLock(path);
  try {
    for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    copyFileSync(backup, path);
  } finally {
    lock.close();
  }
}
