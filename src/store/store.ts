import type { Driver } from './driver.ts';
import { DATA_TABLES } from './schema.ts';
import { diskFull, storedJson } from './faults.ts';

/** Jobs kept waiting for room at most (the oldest give way past it), and how often a full disk is tried again. */
const MOST_WAITING_JOBS = 100_000;
const FULL_RETRY_MS = 1000;
/** `later` jobs wait at most this long (real time) for others to share their commit. */
const LATER_MS = 5;

/**
 * The store: SQLite behind a small driver, one writer, every change inside `transaction(fn)`.
 *
 * A transaction is synchronous and all or nothing: a throw rolls back everything it did, and once it returns the
 * change is on disk (WAL, so a killed process loses nothing it acknowledged; with `sync`, neither does a power
 * cut). What a request sees is committed: nothing half-done is ever visible, because nothing else runs while a
 * transaction does. Effects that must follow a change (a callback send, a clock job) are registered with
 * `afterCommit` and run once the change is durable, never if it rolls back.
 */
export interface Store {
  readonly kind: 'file' | 'memory';
  readonly path: string | null;
  /** For the repositories of each domain: statements prepared once and reused. */
  readonly driver: Driver;
  transaction<T>(fn: () => T): T;
  /** Runs `effect` after the outermost transaction commits (at once outside one); dropped on a rollback. */
  afterCommit(effect: () => void): void;
  /**
   * Runs `job` soon, in one transaction with the other jobs due then (within a few milliseconds): for
   * writes nothing waits on, like the final record of a read, whose own commit would cost more than the read.
   * Due jobs run before any other transaction starts, before `flushLater()` returns and before the store closes.
   */
  later(job: () => void): void;
  /** The due `later` jobs have grown large: run them on the next turn of the event loop instead of waiting. */
  hurry(): void;
  /** Runs the due `later` jobs now; readers of what they write call it first. */
  flushLater(): void;
  readonly inTransaction: boolean;
  readonly closed: boolean;
  /** The store was too large to check when it opened: run `checkStoreInBackground` on it. */
  backgroundCheck: boolean;
  /** Bytes of the write-ahead log not yet rewound (0 in memory). */
  walBytes(): number;
  /** Small named values of the store itself (the clock's position, the start counter). */
  readonly meta: Meta;
  /** Runs inside every write transaction, last before it commits (the clock's position is stamped so). */
  beforeCommit(stamp: () => void): void;
  /** Deletes every record (a reset); inside the caller's transaction. `meta` stays. */
  wipe(): void;
  /** Counts wipes in this process: work begun before a reset settles nothing on the data after it. */
  readonly epoch: number;
  /** Closes the store; resolves once whatever works on its file beside it (a checkpointer) has stopped. */
  close(): Promise<void>;
}

export interface Meta {
  get<T>(name: string): T | undefined;
  set(name: string, value: unknown): void;
}

export interface StoreEffectsOptions {
  /** Where an effect that throws after its commit goes; it cannot undo the commit, so it must not throw into it. */
  onEffectError: (err: unknown) => void;
}

/** Builds the store over an open, migrated driver. */
export function createStore(driver: Driver, where: { kind: 'file' | 'memory'; path: string | null }, options: StoreEffectsOptions): Store {
  // One list of effects per open level: a savepoint rolled back drops its own, and the rest run after COMMIT.
  const levels: (() => void)[][] = [];
  const stamps: (() => void)[] = [];
  let closed = false;
  let epoch = 0;
  const due: (() => void)[] = [];
  let flushScheduled = false;
  let laterTimer: NodeJS.Timeout | null = null;
  function flushDue(): void {
    flushScheduled = false;
    if (laterTimer) clearTimeout(laterTimer);
    laterTimer = null;
    if (closed) return;
    try {
      store.flushLater();
    } catch (err) {
      // Kept (flushLater put them back) and written by the next transaction or retry; nobody waits on them.
      if (!diskFull(err)) options.onEffectError(err);
    }
  }

  const metaGet = driver.prepare('SELECT value FROM meta WHERE name = ?');
  const metaSet = driver.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value');

  // A full disk leaves the due jobs waiting: they are tried again every moment until there is room.
  let retrying: NodeJS.Timeout | null = null;
  function retryWhenRoom(): void {
    if (retrying || closed) return;
    retrying = setTimeout(() => {
      retrying = null;
      if (!closed && due.length > 0) store.later(() => undefined);
    }, FULL_RETRY_MS);
    retrying.unref();
  }

  /**
   * Undoes a level. After some failures (a full disk, an I/O error) SQLite has already rolled the whole
   * transaction back itself, and its ROLLBACK answers that none is active: the error that caused it is the one
   * worth throwing, so that one is kept.
   */
  function rollback(depth: number): void {
    try {
      driver.exec(depth === 0 ? 'ROLLBACK' : `ROLLBACK TO s${depth}; RELEASE s${depth}`);
    } catch {
      // Nothing left to undo at this level.
    }
  }

  function runEffects(effects: (() => void)[]): void {
    for (const effect of effects) {
      try {
        effect();
      } catch (err) {
        options.onEffectError(err);
      }
    }
  }

  const store: Store = {
    ...where,
    backgroundCheck: false,
    walBytes: () => 0,
    driver,
    get inTransaction() {
      return levels.length > 0;
    },
    get closed() {
      return closed;
    },
    transaction<T>(fn: () => T): T {
      if (closed) throw new Error('the store is closed');
      // Jobs queued with `later` happened first: they commit first, on their own (a rollback here keeps them).
      if (levels.length === 0 && due.length > 0) store.flushLater();
      const depth = levels.length;
      driver.exec(depth === 0 ? 'BEGIN IMMEDIATE' : `SAVEPOINT s${depth}`);
      levels.push([]);
      let result: T;
      try {
        result = fn();
        if (result instanceof Promise) throw new TypeError('a store transaction must be synchronous: it cannot span an await');
        if (depth === 0) for (const stamp of stamps) stamp();
      } catch (err) {
        levels.pop();
        rollback(depth);
        throw err;
      }
      const effects = levels.pop() as (() => void)[];
      if (depth > 0) {
        driver.exec(`RELEASE s${depth}`);
        (levels[depth - 1] as (() => void)[]).push(...effects);
        return result;
      }
      try {
        driver.exec('COMMIT');
      } catch (err) {
        // A COMMIT the disk refused (full) leaves the transaction open, or SQLite has already rolled it back.
        rollback(0);
        throw err;
      }
      runEffects(effects);
      return result;
    },
    later(job) {
      due.push(job);
      // A moment after its first job: one commit for the records of many turns (under load a turn holds a request
      // or two, and a commit of its own cost more than the record).
      if (flushScheduled || laterTimer) return;
      laterTimer = setTimeout(flushDue, LATER_MS);
      laterTimer.unref();
    },
    hurry() {
      if (due.length === 0 || flushScheduled) return;
      flushScheduled = true;
      setImmediate(flushDue);
    },
    flushLater() {
      if (due.length === 0 || levels.length > 0) return;
      const jobs = due.splice(0);
      try {
        store.transaction(() => {
          for (const job of jobs) {
            // A job is one statement, all or nothing on its own; its failure must not undo the others' writes,
            // but for a full disk, which fails them all alike: then the whole batch waits for room.
            try {
              job();
            } catch (err) {
              if (diskFull(err)) throw err;
              options.onEffectError(err);
            }
          }
        });
      } catch (err) {
        if (!diskFull(err)) throw err;
        // Nothing of the batch was written: it waits, in its order, before whatever came meanwhile. The disk may
        // stay full for long, so past a bound the newest are dropped (records of reads, nothing a client was told).
        const waiting = [...jobs, ...due].slice(0, MOST_WAITING_JOBS);
        due.length = 0;
        for (const job of waiting) due.push(job);
        retryWhenRoom();
        throw err;
      }
    },
    afterCommit(effect) {
      const current = levels[levels.length - 1];
      if (current) current.push(effect);
      else runEffects([effect]);
    },
    meta: {
      get<T>(name: string): T | undefined {
        const row = metaGet.get(name);
        return row === undefined ? undefined : storedJson<T>(row[0], 'a stored setting');
      },
      set(name, value) {
        metaSet.run(name, JSON.stringify(value));
      },
    },
    beforeCommit: (stamp) => void stamps.push(stamp),
    wipe() {
      for (const table of DATA_TABLES) driver.exec(`DELETE FROM ${table}`);
      store.afterCommit(() => (epoch += 1));
    },
    get epoch() {
      return epoch;
    },
    close() {
      if (!closed) {
        try {
          store.flushLater();
        } catch (err) {
          // A full disk at the very end: what was waiting for room cannot be written any more.
          options.onEffectError(err);
        }
        if (retrying) clearTimeout(retrying);
        if (laterTimer) clearTimeout(laterTimer);
        closed = true;
        driver.close();
      }
      return Promise.resolve();
    },
  };
  return store;
}
