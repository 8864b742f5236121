import { closeSync, existsSync, linkSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { lockHolders } from './holders.ts';
import { openLibsql } from './libsql-driver.ts';
import { StoreDamagedError, StoreOpenError } from './open-error.ts';
import { createSchema } from './schema.ts';
import { storeLogLoss } from './wal-check.ts';

/** What is a store, what is not, and what is refused before SQLite opens a file: each refusal one line, exit 2. */

const SQLITE_HEADER = 'SQLite format 3\0';

export type StoreFileKind = 'missing' | 'empty' | 'sqlite' | 'journal' | 'unknown' | 'folder';

/**
 * What a store file is: missing, empty (0 bytes), SQLite, a store of the journal engine before it (JSON lines), a
 * folder, or none of these. A file that cannot be read is refused here.
 */
export function storeFileKind(path: string): StoreFileKind {
  const head = Buffer.alloc(16);
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) return 'folder';
    if (stat.size === 0) return 'empty';
    const fd = openSync(path, 'r');
    try {
      readSync(fd, head, 0, 16, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new StoreOpenError(`${path}: cannot be read (${(err as Error).message})`);
  }
  if (head.toString('latin1') === SQLITE_HEADER) return 'sqlite';
  return head.toString('utf8').trimStart().startsWith('{') ? 'journal' : 'unknown';
}

/** A 0-byte file is a truncated store: its data is gone, and an empty store in its place would hide that. */
const EMPTY_FILE = 'the file is empty (0 bytes), not a store; was it truncated? Restore a backup, or remove the file to start a new store';

/** Refuses what is not a store (nor nothing, which becomes one where `missing` is allowed). */
export function refuseNonStore(path: string, kind: StoreFileKind, missing: 'allowed' | 'refused'): void {
  if (kind === 'folder') throw new StoreOpenError(`${path}: a folder, not a store file (name the file, such as ${path.replace(/\/+$/, '')}/store.db)`);
  if (kind === 'unknown') throw new StoreOpenError(`${path}: not a store file (neither SQLite nor an svc-emulator journal store)`);
  if (kind === 'journal') throw new StoreOpenError(`${path}: a store of the journal engine; import it first (svc-emulator store import-journal ${path})`);
  if (kind === 'empty') throw new StoreOpenError(`${path}: ${EMPTY_FILE}`);
  if (kind === 'missing' && missing === 'refused') throw new StoreOpenError(`${path}: no such store`);
}

/** A write-ahead log whose committed transactions SQLite would drop. */
const logLossError = (path: string, problem: string): StoreDamagedError =>
  new StoreDamagedError(`${path}: the store is damaged: ${problem}; restore a backup, or move ${path}-wal and ${path}-shm aside to open the store without those transactions (see svc-emulator store check)`, problem, true);

/**
 * Refuses a store whose write-ahead log SQLite would not replay whole (wal-check.ts), before SQLite opens it:
 * opening it would rebuild the log's index without the lost transactions, and the last connection to close would
 * copy what is left into the file and remove the log. A log another process has open is a live one (a running
 * emulator's, beside which a start is refused anyway and a reader reads what it commits): it is not judged.
 */
export function refuseLostLog(path: string): void {
  const others = lockHolders(path);
  if (others && others.length > 0) return;
  let problem: string | null;
  try {
    problem = storeLogLoss(path);
  } catch (err) {
    throw new StoreOpenError(`${path}: its write-ahead log cannot be read (${(err as Error).message})`);
  }
  if (problem) throw logLossError(path, problem);
}

/**
 * Before a new store is made where none is: a write-ahead log still beside the missing file is a deleted store's
 * (SQLite would replay the old log into the new file), refused; a log of its header alone (32 bytes) holds no
 * transaction and goes, with its index. Called with the lock held, so no running emulator's log is touched.
 */
export function refuseOrphanLog(path: string): void {
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 32) {
    throw new StoreOpenError(`${path}: the store is missing but its write-ahead log ${wal} is still there; restore the store, or remove the log to start a new one`);
  }
  for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

/**
 * A new store is made whole under another name and linked into place only once it is: no half-made store (nor a
 * 0-byte file, which is refused) ever stands at `path`, even when the process is killed while making it. The
 * link fails if another store appeared meanwhile, which then opens like any other.
 */
export function createStoreFile(path: string): void {
  const making = `${path}.new-${process.pid}`;
  rmSync(making, { force: true });
  const driver = openLibsql(making);
  try {
    createSchema(driver);
  } finally {
    driver.close();
  }
  try {
    linkSync(making, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(making, { force: true });
  }
}
