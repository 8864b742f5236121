import { existsSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { StoreBusyError } from './driver.ts';
import type { Driver } from './driver.ts';
import { lockFileHolders, lockHolders, processStart } from './holders.ts';
import { lockStore } from './lock-file.ts';
import { openLibsql } from './libsql-driver.ts';
import { StoreOpenError } from './open-error.ts';

/**
 * One writer per store. The emulator that opens a store writes who it is into the store itself (the `holder` row
 * of `meta`: process id, host, when, and when that process started), in the same `BEGIN IMMEDIATE` transaction
 * that reads the row before it: SQLite lets one such transaction run at a time, so of two starts at once one
 * claims the store and the other reads its claim. A claim holds while the process it names is alive (the same
 * process: its start time matches) and holds the database file open (holders.ts); a killed emulator's claim holds
 * nothing, and the next start takes the store at once. Nothing beside the file counts: a symlink, a hard link, a
 * lock file renamed or deleted reach the same row (SQLite gives each name of a file a log of its own, so the claim
 * is copied into the file as it is made, where another name reads it; two starts at the same instant by two names
 * find each other's lock file open, holders.ts). Readers never claim.
 *
 * The lock file beside the store (`<real path>.lock`, held exclusively while the emulator runs) stays for what
 * comes before the row can be read: two starts making one new store at once, and, where the system keeps no list
 * of the file's holders (not Linux), as the only lock there is. A claim is made on one host: another machine's
 * emulator on a shared (network) file system is not seen, as SQLite's WAL mode does not work there anyway.
 */

interface Holder {
  pid?: number;
  host?: string;
  since?: string;
  /** The holder's process start time (holders.ts, processStart). */
  started?: string | null;
}

const READ = "SELECT value FROM meta WHERE name = 'holder'";
const hasMeta = (driver: Driver): boolean => driver.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get()?.[0] === 1;

function readHolder(driver: Driver): Holder | null {
  const row = hasMeta(driver) ? driver.prepare(READ).get() : undefined;
  if (!row) return null;
  try {
    return JSON.parse(String(row[0])) as Holder;
  } catch {
    return null;
  }
}

/** Whether the claim is another process's that still holds the file `path` open. */
function holdsIt(holder: Holder | null, path: string): holder is Holder & { pid: number } {
  if (!holder || typeof holder.pid !== 'number' || holder.pid === process.pid) return false;
  // Without a list of the file's holders the claim cannot be checked (it may be a backup's copy): the lock file decides.
  const holders = lockHolders(path);
  if (!holders?.includes(holder.pid)) return false;
  return !holder.started || processStart(holder.pid) === holder.started;
}

const named = (holder: Holder): string => `process ${holder.pid ?? '?'} on ${holder.host ?? '?'} (since ${holder.since ?? '?'})`;

/** Who holds a store, for a refusal: its claim when that holds, else whoever is seen holding the file. */
export function holderOf(path: string): string {
  try {
    const driver = openLibsql(path, { readOnly: true });
    try {
      const holder = readHolder(driver);
      if (holdsIt(holder, path)) return named(holder);
    } finally {
      driver.close();
    }
  } catch {
    // Unreadable: the processes seen are all there is to say.
  }
  const pids = existsSync(path) ? lockHolders(path) : null;
  return pids && pids.length > 0 ? `process ${pids.join(', ')}` : 'another process';
}

/** A log up to this size is checkpointed with the claim (a few milliseconds); a bigger one by the worker. */
const CLAIM_CHECKPOINT_BYTES = 8 * 1024 * 1024;

const logBytes = (path: string): number => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};

/** This process's claim, as written into the store. */
const ourClaim = (): string => JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), started: processStart(process.pid) });

/**
 * Claims the store for this process, or throws the one line naming the emulator that holds it. Before the schema
 * is migrated: a store another emulator holds is not written. A store without its tables yet (a new SQLite file
 * becoming a store) is held by nobody; `claimAfterMigration` writes the claim once the table is there.
 */
export function claimStore(driver: Driver, path: string): { claim: string | null } {
  const refuse = (who: string): StoreOpenError => new StoreOpenError(`${path}: the store is in use by ${who}; one emulator per store`);
  driver.exec('BEGIN IMMEDIATE');
  let claim: string | null;
  try {
    const holder = readHolder(driver);
    if (holdsIt(holder, path)) throw refuse(named(holder));
    claim = hasMeta(driver) ? ourClaim() : null;
    if (claim) driver.prepare("INSERT INTO meta (name, value) VALUES ('holder', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run(claim);
    driver.exec('COMMIT');
  } catch (err) {
    try {
      driver.exec('ROLLBACK');
    } catch {
      // SQLite rolled it back itself.
    }
    throw err;
  }
  try {
    // Into the file at once: a start by another name of the file (a hard link, whose log is another) reads the
    // file. Not a big log a kill left (the checkpoint worker copies that off the event loop, soon).
    if (logBytes(path) <= CLAIM_CHECKPOINT_BYTES) driver.exec('PRAGMA wal_checkpoint(PASSIVE)');
    // A start by another name at this same instant has claimed in its own log: its lock file shows it.
    const others = lockFileHolders(path);
    if (others && others.length > 0) throw refuse(holderOf(path));
  } catch (err) {
    if (claim) releaseClaim(driver, claim);
    throw err;
  }
  return { claim };
}

/** The claim of a store whose `meta` table the migration has just made. */
export function claimAfterMigration(driver: Driver, claimed: { claim: string | null }): string {
  if (claimed.claim) return claimed.claim;
  const claim = ourClaim();
  driver.prepare("INSERT INTO meta (name, value) VALUES ('holder', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run(claim);
  return claim;
}

/** Gives the claim up at close (a process that goes on running no longer holds the store); a kill leaves it, harmless. */
export function releaseClaim(driver: Driver, claim: string): void {
  try {
    driver.prepare("DELETE FROM meta WHERE name = 'holder' AND value = ?").run(claim);
  } catch {
    // A full disk or a damaged file at the very end: a claim left behind holds nothing once this process ends.
  }
}

/**
 * The store's lock alone, for a restore (which swaps the files under it): refused while an emulator holds the
 * store, by its lock file or by its claim.
 */
export function takeStoreLock(path: string): Driver {
  const refuse = (who: string): StoreOpenError => new StoreOpenError(`${path}: the store is in use by ${who}; stop it first`);
  let lock: Driver;
  try {
    lock = lockStore(path);
  } catch (err) {
    if (err instanceof StoreBusyError) throw refuse(holderOf(path));
    throw err;
  }
  if (!existsSync(path)) return lock;
  let holder: Holder | null = null;
  try {
    const driver = openLibsql(path);
    try {
      driver.exec('BEGIN IMMEDIATE');
      holder = readHolder(driver);
      driver.exec('ROLLBACK');
    } finally {
      driver.close();
    }
  } catch (err) {
    // A write under way: someone holds the store. A file whose claim cannot be read (damaged, which is what a
    // restore is for) is held by whoever has it open.
    const others = err instanceof StoreBusyError ? [0] : (lockHolders(path) ?? []);
    if (others.length > 0) {
      lock.close();
      throw refuse(holderOf(path));
    }
  }
  if (holdsIt(holder, path)) {
    lock.close();
    throw refuse(named(holder));
  }
  if ((lockFileHolders(path) ?? []).length > 0) {
    lock.close();
    throw refuse(holderOf(path));
  }
  return lock;
}
