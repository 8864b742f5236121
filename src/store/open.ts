import { closeSync, existsSync, linkSync, mkdirSync, openSync, readSync, realpathSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { StoreBusyError } from './driver.ts';
import type { Driver } from './driver.ts';
import { fileDamaged } from './faults.ts';
import { otherEmulators } from './holders.ts';
import { openLibsql } from './libsql-driver.ts';
import { createSchema, foreignStoreProblem, migrate, StoreVersionError } from './schema.ts';
import { startCheckpointer } from './checkpoint.ts';
import { createStore } from './store.ts';
import type { Store } from './store.ts';

export interface StoreOptions {
  /** SQLite file; omit for a store in memory (same code, nothing on disk). */
  path?: string;
  /** Wait for the disk on every commit (`synchronous=FULL`): survives a power cut, not only a killed process. */
  sync?: boolean;
  /**
   * Check the store once it is open (default true): `backgroundCheck` asks whoever opened it to run
   * `checkStoreInBackground`, so a start costs the same whatever the size. Before that, opening reads only what
   * says whether the file is a store at all (its header, application id and schema), at any size in the same time.
   */
  check?: boolean;
  /**
   * Read what is on disk without taking the store: no lock, no migration, nothing written (a look at a store
   * another process holds, or one about to be checked). Reads see every committed transaction.
   */
  readOnly?: boolean;
  onEffectError?: (err: unknown) => void;
}

/** A store that cannot be opened: one line for the user, exit 2. */
export class StoreOpenError extends Error {}

const WAL_VALVE_BYTES = 256 * 1024 * 1024;
const WAL_KEEP_BYTES = 64 * 1024 * 1024;
/** How often the worker copies the log into the database (real time). */
export const CHECKPOINT_EVERY_MS = 250;

export const damageMessage = (path: string, problems: string[]): string =>
  `${path}: the store is damaged (${problems.slice(0, 3).join('; ')}${problems.length > 3 ? `; ${problems.length - 3} more` : ''}); see svc-emulator store check`;

const SQLITE_HEADER = 'SQLite format 3\0';

/** What a store file is: missing, empty (0 bytes), SQLite, a store of the journal engine before it (JSON lines), or neither. */
export function storeFileKind(path: string): 'missing' | 'empty' | 'sqlite' | 'journal' | 'unknown' {
  const head = Buffer.alloc(16);
  try {
    if (statSync(path).size === 0) return 'empty';
    const fd = openSync(path, 'r');
    try {
      readSync(fd, head, 0, 16, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
  if (head.toString('latin1') === SQLITE_HEADER) return 'sqlite';
  return head.toString('utf8').trimStart().startsWith('{') ? 'journal' : 'unknown';
}

/**
 * Who holds a store: as the holder wrote it into the store (readable while the lock is held) when that is one of
 * `pids` (the processes seen holding the file), else the first of them.
 */
function holderOf(path: string, pids: number[] = []): string {
  try {
    const driver = openLibsql(path);
    try {
      const row = driver.prepare("SELECT value FROM meta WHERE name = 'holder'").get();
      const holder = row ? (JSON.parse(row[0] as string) as { pid?: number; host?: string; since?: string }) : {};
      if (pids.length === 0 || (holder.pid !== undefined && pids.includes(holder.pid))) {
        return `process ${holder.pid ?? '?'} on ${holder.host ?? '?'} (since ${holder.since ?? '?'})`;
      }
    } finally {
      driver.close();
    }
  } catch {
    // Unreadable: the processes seen are all there is to say.
  }
  return pids.length > 0 ? `process ${pids.join(', ')}` : 'another process';
}

/**
 * One writer per store, by two locks. The first is a small SQLite file beside the store, locked exclusively for
 * as long as the emulator runs (the operating system drops it with the process, so a killed holder never blocks
 * the next start); it is named after the store's real path, so a symlink finds the same one, and it keeps two
 * starts from creating one new store at once. The second belongs to the database file itself: see
 * `refuseOtherHolders`. Only `exec` touches the lock file: a libsql connection with prepared statements outlives
 * its `close()`, and so would the lock.
 */
function lockStore(path: string): Driver {
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

/**
 * The lock that belongs to the database file: every connection to a store in WAL mode holds a shared lock on the
 * file's inode while it is open, whatever path it came by (a symlink, a hard link, a lock file deleted beside it);
 * holders.ts tells the emulators among the processes holding one. Once this process holds its own, another
 * emulator holding one has the store open too: the start is refused. Two starts at the same moment each see the
 * other and both are refused, never both let in.
 */
function refuseOtherHolders(path: string): void {
  const others = otherEmulators(path);
  if (others === null || others.length === 0) return;
  throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path, others)}; one emulator per store`);
}

/** The store's lock alone (a restore swaps the files under it); refused while an emulator holds the store. */
export function takeStoreLock(path: string): Driver {
  let lock: Driver;
  try {
    lock = lockStore(path);
  } catch (err) {
    if (err instanceof StoreBusyError) throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path)}; stop it first`);
    throw err;
  }
  const others = existsSync(path) ? otherEmulators(path) : null;
  if (others && others.length > 0) {
    lock.close();
    throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path, others)}; stop it first`);
  }
  return lock;
}

/** A 0-byte file is a truncated store: its data is gone, and an empty store in its place would hide that. */
const EMPTY_FILE = 'the file is empty (0 bytes), not a store; was it truncated? Restore a backup, or remove the file to start a new store';

/**
 * Before a new store is made where none is: a write-ahead log still beside the missing file is a deleted store's
 * (SQLite would replay the old log into the new file), refused; a log of its header alone (32 bytes) holds no
 * transaction and goes, with its index. Called with the lock held, so no running emulator's log is touched.
 */
function refuseOrphanLog(path: string): void {
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
function createStoreFile(path: string): void {
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

export function openStore(options: StoreOptions = {}): Store {
  const onEffectError = options.onEffectError ?? ((err: unknown) => console.error('svc-emulator: an effect after a commit failed:', err));
  if (!options.path) {
    const driver = openLibsql(':memory:');
    migrate(driver, 'memory');
    return createStore(driver, { kind: 'memory', path: null }, { onEffectError });
  }
  const path = options.path;
  const kind = storeFileKind(path);
  if (kind === 'unknown') throw new StoreOpenError(`${path}: not a store file (neither SQLite nor an svc-emulator journal store)`);
  if (kind === 'journal') throw new StoreOpenError(`${path}: a store of the journal engine; import it first (svc-emulator store import-journal ${path})`);
  if (kind === 'empty') throw new StoreOpenError(`${path}: ${EMPTY_FILE}`);
  if (options.readOnly) {
    if (kind === 'missing') throw new StoreOpenError(`${path}: no such store`);
    const driver = openLibsql(path);
    try {
      const foreign = foreignStoreProblem(driver);
      if (foreign) throw new StoreOpenError(`${path}: ${foreign}`);
    } catch (err) {
      driver.close();
      if (fileDamaged(err)) throw new StoreOpenError(`${path}: the store is damaged (${(err as Error).message}); see svc-emulator store check`);
      throw err;
    }
    return createStore(driver, { kind: 'file', path }, { onEffectError });
  }
  mkdirSync(dirname(path), { recursive: true });
  let lock: Driver | null = null;
  let driver: Driver | null = null;
  try {
    lock = lockStore(path);
    if (kind === 'missing') {
      refuseOrphanLog(path);
      createStoreFile(path);
    }
    driver = openLibsql(path);
    // Whose file it is comes first: nothing is written to another program's database, not even the log mode.
    const foreign = foreignStoreProblem(driver);
    if (foreign) throw new StoreOpenError(`${path}: ${foreign}`);
    driver.exec('PRAGMA journal_mode = WAL');
    // From here this connection holds its shared lock on the file: anyone else holding one has the store open.
    refuseOtherHolders(path);
    driver.exec(`PRAGMA synchronous = ${options.sync ? 'FULL' : 'NORMAL'}`);
    // The worker of checkpoint.ts copies the log into the database off the event loop (a COMMIT's own checkpoint
    // costs 100 ms and more); the log is rewound by the first write after the worker has copied all of it. Only
    // writes that never pause for a moment keep it growing: past 256 MB a COMMIT's checkpoint is the safety valve.
    driver.exec(`PRAGMA wal_autocheckpoint = ${WAL_VALVE_BYTES / 4096}; PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
    migrate(driver, path);
  } catch (err) {
    driver?.close();
    lock?.close();
    if (err instanceof StoreBusyError) throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path)}; one emulator per store`);
    if (err instanceof StoreOpenError) throw err;
    if (err instanceof StoreVersionError) throw new StoreOpenError(err.message);
    if (fileDamaged(err)) throw new StoreOpenError(`${path}: the store is damaged (${(err as Error).message}); see svc-emulator store check`);
    throw err;
  }
  const store = createStore(driver, { kind: 'file', path }, { onEffectError });
  store.backgroundCheck = options.check ?? true;
  store.transaction(() => store.meta.set('holder', { pid: process.pid, host: hostname(), since: new Date().toISOString() }));
  const checkpointer = startCheckpointer(path, CHECKPOINT_EVERY_MS);
  store.walBytes = checkpointer.logBytes;
  const close = store.close;
  const held = lock;
  let stopped: Promise<void> | null = null;
  return Object.assign(store, {
    close() {
      if (!stopped) {
        void close();
        held.close();
        // The worker checkpoints once more and closes its connection; SQLite's own locks keep that safe beside a
        // next emulator that may already have opened the store.
        stopped = checkpointer.stop();
      }
      return stopped;
    },
  });
}
