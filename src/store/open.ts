import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreBusyError } from './driver.ts';
import type { Driver } from './driver.ts';
import { fileDamaged, StoreDamageError } from './faults.ts';
import { openLibsql } from './libsql-driver.ts';
import { StoreDamagedError, StoreOpenError } from './open-error.ts';
import { foreignStoreProblem, migrate, StoreVersionError } from './schema.ts';
import { startCheckpointer } from './checkpoint.ts';
import { createStoreFile, refuseLostLog, refuseNonStore, refuseOrphanLog, storeFileKind } from './store-file.ts';
import { createStore } from './store.ts';
import type { Store } from './store.ts';
import { lockStore } from './lock-file.ts';
import { claimAfterMigration, claimStore, holderOf, releaseClaim } from './writer.ts';

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
   * Open the file without taking the store: no lock, no claim, no migration, nothing written by the store itself
   * (a look at a store another process holds, or one about to be checked; tests change a stopped store through
   * its connection). Reads see every committed transaction. `readStore` is the look that can write nothing.
   */
  readOnly?: boolean;
  /**
   * Copy the log into the database from a worker of its own (default true). Without it SQLite's own checkpoint
   * runs in the COMMIT that crosses 1,000 pages: right for a small store idle most of its life (a session's),
   * where a worker thread each would cost more memory than the store.
   */
  checkpointWorker?: boolean;
  /**
   * A store inside the folder of another store this process holds (a session's, beside the default store): that
   * store's lock and claim already keep a second emulator out, so this one takes neither (no lock file, no claim:
   * two file descriptors, a connection and some fsyncs fewer per store).
   */
  guardedByParent?: boolean;
  onEffectError?: (err: unknown) => void;
}

const WAL_VALVE_BYTES = 256 * 1024 * 1024;
const WAL_KEEP_BYTES = 64 * 1024 * 1024;
/** How often the worker copies the log into the database (real time). */
export const CHECKPOINT_EVERY_MS = 250;

const defaultEffectError = (err: unknown): void => console.error('svc-emulator: an effect after a commit failed:', err);

/** An error SQLite (or the file system) raised while a store was being opened, as the one line it deserves. */
function openFailure(path: string, err: unknown): unknown {
  if (err instanceof StoreOpenError) return err;
  if (err instanceof StoreVersionError) return new StoreOpenError(err.message);
  // The driver has made SQLite's "damaged" a StoreDamageError already; SQLite's own, where it had not.
  const damage = err instanceof StoreDamageError ? err.where.replace(/ \([^()]*\)$/, '') : fileDamaged(err) ? (err as Error).message : null;
  if (damage !== null) return new StoreDamagedError(`${path}: the store is damaged (${damage}); see svc-emulator store check`, damage);
  // Any other refusal of SQLite's at this point (a log it cannot open, a schema that does not match its version):
  // the store cannot be opened, and a stack trace would say no more.
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  if (code.startsWith('SQLITE_')) return new StoreOpenError(`${path}: the store cannot be opened (${(err as Error).message}); see svc-emulator store check`);
  return err;
}

/** A file store opened without taking it: `readOnly` connection or not, after the file and its log are found sound. */
function openToRead(path: string, connection: { readOnly: boolean }, onEffectError: (err: unknown) => void): Store {
  refuseNonStore(path, storeFileKind(path), 'refused');
  refuseLostLog(path);
  let driver: Driver | null = null;
  try {
    driver = openLibsql(path, connection);
    const foreign = foreignStoreProblem(driver);
    if (foreign) throw new StoreOpenError(`${path}: ${foreign}`);
    return createStore(driver, { kind: 'file', path }, { onEffectError });
  } catch (err) {
    driver?.close();
    throw openFailure(path, err);
  }
}

/**
 * A store opened to read and nothing else (`store check`, `store backup`, `store export`): a read-only connection,
 * which never copies the log into the file nor removes it, beside a running emulator or on a stopped store alike;
 * refused like a start (a StoreOpenError; a StoreDamagedError, with the check's line, for a damaged store).
 */
export function readStore(path: string): Store {
  return openToRead(path, { readOnly: true }, defaultEffectError);
}

export function openStore(options: StoreOptions = {}): Store {
  const onEffectError = options.onEffectError ?? defaultEffectError;
  if (!options.path) {
    const driver = openLibsql(':memory:');
    migrate(driver, 'memory');
    return createStore(driver, { kind: 'memory', path: null }, { onEffectError });
  }
  const path = options.path;
  if (options.readOnly) return openToRead(path, { readOnly: false }, onEffectError);
  const kind = storeFileKind(path);
  refuseNonStore(path, kind, 'allowed');
  mkdirSync(dirname(path), { recursive: true });
  let lock: Driver | null = null;
  let driver: Driver | null = null;
  let claimed: { claim: string | null } | null = null;
  let claim: string | null;
  try {
    if (!options.guardedByParent) lock = lockStore(path);
    if (kind === 'missing') {
      refuseOrphanLog(path);
      createStoreFile(path);
    } else {
      // Before SQLite opens it: opening would rebuild the log's index and keep only what it replays.
      refuseLostLog(path);
    }
    driver = openLibsql(path);
    // Whose file it is comes first: nothing is written to another program's database, not even the log mode.
    const foreign = foreignStoreProblem(driver);
    if (foreign) throw new StoreOpenError(`${path}: ${foreign}`);
    driver.exec('PRAGMA journal_mode = WAL');
    driver.exec(`PRAGMA synchronous = ${options.sync ? 'FULL' : 'NORMAL'}`);
    // One writer: the store names its emulator (writer.ts); a second is refused before anything else is written.
    claimed = options.guardedByParent ? { claim: null } : claimStore(driver, path);
    // The worker of checkpoint.ts copies the log into the database off the event loop (a COMMIT's own checkpoint
    // costs 100 ms and more); the log is rewound by the first write after the worker has copied all of it. Only
    // writes that never pause for a moment keep it growing: past 256 MB a COMMIT's checkpoint is the safety valve.
    const worker = options.checkpointWorker ?? true;
    driver.exec(`PRAGMA wal_autocheckpoint = ${worker ? WAL_VALVE_BYTES / 4096 : 1000}; PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
    migrate(driver, path);
    claim = options.guardedByParent ? null : claimAfterMigration(driver, claimed);
  } catch (err) {
    if (driver && claimed?.claim) releaseClaim(driver, claimed.claim);
    driver?.close();
    lock?.close();
    if (err instanceof StoreBusyError) throw new StoreOpenError(`${path}: the store is in use by ${holderOf(path)}; one emulator per store`);
    throw openFailure(path, err);
  }
  const store = createStore(driver, { kind: 'file', path }, { onEffectError });
  store.backgroundCheck = options.check ?? true;
  const checkpointer = options.checkpointWorker ?? true ? startCheckpointer(path, CHECKPOINT_EVERY_MS) : null;
  if (checkpointer) store.walBytes = checkpointer.logBytes;
  const close = store.close;
  const held = lock;
  const opened = driver;
  let stopped: Promise<void> | null = null;
  return Object.assign(store, {
    close() {
      if (!stopped) {
        if (!store.closed && !store.inTransaction) {
          try {
            store.flushLater();
          } catch {
            // Kept; the store's own close tries once more and reports it.
          }
          // The claim goes once nothing is left to write: this process may go on running without the store.
          if (claim !== null) releaseClaim(opened, claim);
        }
        void close();
        held?.close();
        // The worker checkpoints once more and closes its connection; SQLite's own locks keep that safe beside a
        // next emulator that may already have opened the store.
        stopped = checkpointer ? checkpointer.stop() : Promise.resolve();
      }
      return stopped;
    },
  });
}
