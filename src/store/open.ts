import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { StoreBusyError } from './driver.ts';
import type { Driver } from './driver.ts';
import { openLibsql } from './libsql-driver.ts';
import { migrate, StoreVersionError } from './schema.ts';
import { checkStore } from './check.ts';
import { startCheckpointer } from './checkpoint.ts';
import { createStore } from './store.ts';
import type { Store } from './store.ts';

export interface StoreOptions {
  /** SQLite file; omit for a store in memory (same code, nothing on disk). */
  path?: string;
  /** Wait for the disk on every commit (`synchronous=FULL`): survives a power cut, not only a killed process. */
  sync?: boolean;
  /**
   * Check the store when opening it (default true): SQLite's quick check and the balances against the ledger.
   * A store up to CHECK_AT_OPEN_BYTES is checked before it opens (damage refuses the start); a larger one is
   * left to `checkStoreInBackground`, so a start costs the same whatever the size (`backgroundCheck` says so).
   */
  check?: boolean;
  /** Checked before opening up to this size; default CHECK_AT_OPEN_BYTES. */
  checkAtOpenBytes?: number;
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

/** Stores up to this size are checked before they open; larger ones in the background. */
export const CHECK_AT_OPEN_BYTES = 64 * 1024 * 1024;

export const damageMessage = (path: string, problems: string[]): string =>
  `${path}: the store is damaged (${problems.slice(0, 3).join('; ')}${problems.length > 3 ? `; ${problems.length - 3} more` : ''}); see svc-emulator store check`;

const SQLITE_HEADER = 'SQLite format 3\0';

/** What a store file is: missing, SQLite, a store of the journal engine before it (JSON lines), or neither. */
export function storeFileKind(path: string): 'missing' | 'sqlite' | 'journal' | 'unknown' {
  const head = Buffer.alloc(16);
  try {
    if (statSync(path).size === 0) return 'missing';
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

/** Who holds a store, as the holder wrote it into the store (readable while the lock is held). */
function holderOf(path: string): string {
  try {
    const driver = openLibsql(path);
    try {
      const row = driver.prepare("SELECT value FROM meta WHERE name = 'holder'").get();
      const holder = row ? (JSON.parse(row[0] as string) as { pid?: number; host?: string; since?: string }) : {};
      return `process ${holder.pid ?? '?'} on ${holder.host ?? '?'} (since ${holder.since ?? '?'})`;
    } finally {
      driver.close();
    }
  } catch {
    return 'another process';
  }
}

/**
 * One writer per store: a small SQLite file beside it, locked exclusively for as long as the emulator runs.
 * The operating system drops the lock with the process, so a killed holder never blocks the next start. Only
 * `exec` touches it: a libsql connection with prepared statements outlives its `close()`, and so would the lock.
 */
function lockStore(path: string): Driver {
  const lock = openLibsql(`${path}.lock`);
  try {
    lock.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS held (x INTEGER); COMMIT');
    return lock;
  } catch (err) {
    lock.close();
    throw err;
  }
}

const damaged = (err: unknown): boolean => {
  const code = (err as { code?: string } | null)?.code ?? '';
  return code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB');
};

/** The store's lock alone (a restore swaps the files under it); refused while an emulator holds the store. */
export function takeStoreLock(path: string): Driver {
  try {
    return lockStore(path);
  } catch (err) {
    if (err instanceof StoreBusyError) throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path)}; stop it first`);
    throw err;
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
  if (options.readOnly) {
    if (kind === 'missing') throw new StoreOpenError(`${path}: no such store`);
    const driver = openLibsql(path);
    return createStore(driver, { kind: 'file', path }, { onEffectError });
  }
  mkdirSync(dirname(path), { recursive: true });
  let lock: Driver | null = null;
  let driver: Driver | null = null;
  try {
    lock = lockStore(path);
    driver = openLibsql(path);
    driver.exec('PRAGMA journal_mode = WAL');
    driver.exec(`PRAGMA synchronous = ${options.sync ? 'FULL' : 'NORMAL'}`);
    // The worker of checkpoint.ts copies the log into the database off the event loop (a COMMIT's own checkpoint
    // costs 100 ms and more); the log is rewound by the first write after the worker has copied all of it. Only
    // writes that never pause for a moment keep it growing: past 256 MB a COMMIT's checkpoint is the safety valve.
    driver.exec(`PRAGMA wal_autocheckpoint = ${WAL_VALVE_BYTES / 4096}; PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
    migrate(driver, path);
    if ((options.check ?? true) && statSync(path).size <= (options.checkAtOpenBytes ?? CHECK_AT_OPEN_BYTES)) {
      const problems = checkStore(driver);
      if (problems.length > 0) throw new StoreOpenError(damageMessage(path, problems));
    }
  } catch (err) {
    driver?.close();
    lock?.close();
    if (err instanceof StoreBusyError) throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path)}; one emulator per store`);
    if (err instanceof StoreOpenError) throw err;
    if (err instanceof StoreVersionError) throw new StoreOpenError(err.message);
    if (damaged(err)) throw new StoreOpenError(`${path}: the store is damaged (${(err as Error).message}); see svc-emulator store check`);
    throw err;
  }
  const store = createStore(driver, { kind: 'file', path }, { onEffectError });
  store.backgroundCheck = (options.check ?? true) && statSync(path).size > (options.checkAtOpenBytes ?? CHECK_AT_OPEN_BYTES);
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
