import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Driver } from './driver.ts';
import { openLibsql } from './libsql-driver.ts';

/**
 * The lock file: a small SQLite file beside the store, locked exclusively for as long as the emulator runs (the
 * operating system drops it with the process). Named after the store's real path, so a symlink finds the same
 * one. The store's own claim is what refuses a second writer (writer.ts); this keeps two starts from making one
 * new store at once, and is all there is where the system lists no holders of a file. Only `exec` touches it: a
 * libsql connection with prepared statements outlives its `close()`, and so would the lock.
 */
export function lockStore(path: string): Driver {
  const lock = openLibsql(`${realPathOf(path)}.lock`);
  try {
    lock.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS held (x INTEGER); COMMIT');
    return lock;
  } catch (err) {
    lock.close();
    throw err;
  }
}

/** The path with every symlink resolved; for a file not made yet, its folder's real path and its name. */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

