import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { checkStore } from './check-run.ts';
import { openStore, StoreOpenError, takeStoreLock } from './open.ts';

/**
 * What `svc-emulator store check|backup|restore` do. Check and backup read the file beside a running emulator
 * (SQLite readers never block its writer); restore takes the store, so it is refused while one runs.
 */

/** The store check (check.ts) on a file; empty when the store is sound. */
export function checkStoreFile(path: string): string[] {
  const store = openStore({ path, readOnly: true });
  try {
    return checkStore(store.driver);
  } finally {
    void store.close();
  }
}

/** A consistent copy of the store as of one instant, compacted, in one file (`VACUUM INTO`). */
export function backupStore(path: string, target: string): void {
  if (existsSync(target)) throw new StoreOpenError(`${target}: already exists; a backup never overwrites a file`);
  const store = openStore({ path, readOnly: true });
  try {
    store.driver.prepare('VACUUM INTO ?').run(target);
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
