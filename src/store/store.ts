import { parseTime } from '../clock/time-format.ts';
import { mkdir, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KEYED_SECTIONS} from './changes.ts';
import { createChangeLog, trackChanges } from './changes.ts';
import { dropJournalsBefore, journalPath, loadStoreFile, operationOf, RESET, writeAll, writeSnapshot } from './log-file.ts';
import type { Operation } from './log-file.ts';
import { emptyData, SCHEMA_VERSION } from './schema.ts';
import type { StoreData, StoredTask } from './schema.ts';

/**
 * The embedded store: data in memory, and with a path, a snapshot file plus an append-only journal (see
 * log-file.ts). Domain code changes `data` synchronously, so a check-then-change never interleaves with another
 * request, then awaits `commit()` before answering: once it resolves, every change made so far has been handed to
 * the operating system in one append, so a killed process loses nothing it acknowledged.
 *
 * A commit writes only the entries changed since the last one (a few KB), whatever the size of the store; the
 * journal is folded into a fresh snapshot once it outgrows the snapshot, in the background.
 *
 * Changes are seen through `data` (see changes.ts). So code that stores a new object and keeps changing it later
 * (after an await) must go on through the stored one (`data.deliveries[id]`), not its own reference to the plain
 * object: the plain object is the same data, but its changes are not journaled.
 */
export interface Store {
  readonly data: StoreData;
  readonly kind: 'file' | 'memory';
  readonly path: string | null;
  /** Resolves once a write that contains every change made so far has completed. */
  commit(): Promise<void>;
  /** Replaces everything with `next` (reset) and commits. */
  replace(next: StoreData): Promise<void>;
  /** Writes a fresh snapshot and drops the journals it covers. */
  compact(): Promise<void>;
  /** Commits what is left and closes the journal; later commits fail. */
  close(): Promise<void>;
  /** The plain data, for listing keys in bulk without the cost of change tracking. Never change it. */
  peek(): StoreData;
  /** Runs `stamp` on the data just before each write (the clock's position, say); a stamp that changes nothing writes nothing. */
  onWrite(stamp: (data: StoreData) => void): void;
  /** Sizes on disk, for benchmarks and the health view. */
  stats(): StoreStats;
  /**
   * Calls `listener` with the key of every entry added to `section` from now on, in the order added (which is
   * also the section's order), and `onReplace` after a reset: retention keeps its queues with these instead of
   * scanning a section of a million entries.
   */
  watch(section: KeyedSection, listener: (key: string) => void, onReplace: () => void): void;
}

type KeyedSection = (typeof KEYED_SECTIONS)[number];

function createWatchers(): Pick<Store, 'watch'> & { added(section: string, key: string): void; replaced(): void } {
  const listeners = new Map<string, ((key: string) => void)[]>();
  const resets: (() => void)[] = [];
  return {
    watch(section, listener, onReplace) {
      listeners.set(section, [...(listeners.get(section) ?? []), listener]);
      resets.push(onReplace);
    },
    added: (section, key) => listeners.get(section)?.forEach((listener) => listener(key)),
    replaced: () => resets.forEach((reset) => reset()),
  };
}

export interface StoreStats {
  snapshotBytes: number;
  journalBytes: number;
  generation: number;
  compactions: number;
}

export interface StoreOptions {
  /** Store file path; omit for an in-memory store. */
  path?: string;
  /** Journal bytes past which a compaction starts, at least; default 64 MB (or the snapshot's size, if larger). */
  compactAfterBytes?: number;
  /** Flush every journal append to the disk (fdatasync), not only to the operating system. */
  sync?: boolean;
}

const DEFAULT_COMPACT_AFTER = 64 * 1024 * 1024;

export async function openStore(options: StoreOptions): Promise<Store> {
  return options.path ? openFileStore(options.path, options) : openMemoryStore();
}

function openMemoryStore(): Store {
  const changes = createChangeLog();
  const watchers = createWatchers();
  // Tracked like the file store, so both behave the same to the code that uses them.
  const tracker = trackChanges(emptyData(), changes, watchers.added);
  return {
    get data() {
      return tracker.data;
    },
    kind: 'memory',
    path: null,
    commit() {
      changes.take();
      return Promise.resolve();
    },
    replace(next) {
      tracker.reset(carryOver(tracker.raw(), next));
      changes.take();
      watchers.replaced();
      return Promise.resolve();
    },
    watch: watchers.watch,
    compact: () => Promise.resolve(),
    close: () => Promise.resolve(),
    peek: tracker.raw,
    // Nothing is written, so there is nothing to stamp.
    onWrite: () => undefined,
    stats: () => ({ snapshotBytes: 0, journalBytes: 0, generation: 0, compactions: 0 }),
  };
}

async function openFileStore(path: string, options: StoreOptions): Promise<Store> {
  await mkdir(dirname(path), { recursive: true });
  const loaded = await loadStoreFile(path);
  const changes = createChangeLog();
  const watchers = createWatchers();
  const tracker = trackChanges(upgrade(loaded.data, path), changes, watchers.added);
  const compactAfter = options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER;

  // Each start writes a journal of its own, so a torn last line of the previous one is never appended to.
  let generation = Math.max(loaded.generation, ...loaded.journals.map((j) => j.generation)) + 1;
  let journal: FileHandle = await open(journalPath(path, generation), 'a');
  // Bytes in the current journal file (each start and each compaction begins a new, empty one).
  let journalOffset = 0;
  let journalBytes = loaded.journals.reduce((sum, j) => sum + j.bytes, 0);
  let snapshotBytes = loaded.snapshotBytes;
  let compactions = 0;
  let closed = false;
  let closing = false;

  // Writes run one at a time, in order, on this chain.
  let chain: Promise<void> = Promise.resolve();
  const enqueue = <T>(work: () => Promise<T>): Promise<T> => {
    const run = chain.then(work);
    chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };

  /** Appends one line: all of it, or (a failed write, a full disk) nothing, so no half line is left to glue onto. */
  const writeLine = async (operations: Operation[]): Promise<void> => {
    const offset = journalOffset;
    try {
      const written = await writeAll(journal, `${JSON.stringify(operations)}\n`);
      journalOffset += written;
      journalBytes += written;
      if (options.sync) await journal.datasync();
    } catch (err) {
      await journal.truncate(offset).catch(() => undefined);
      throw err;
    }
  };

  const stamps: ((data: StoreData) => void)[] = [];
  const append = async (): Promise<void> => {
    // Stamps first: a write that only moves the clock (an advance with nothing due) still records it.
    for (const stamp of stamps) stamp(tracker.data);
    if (changes.size === 0) return;
    const changed = changes.take();
    const raw = tracker.raw();
    const operations: Operation[] = [];
    for (const [section, keys] of changed) for (const key of keys) operations.push(operationOf(raw, section, key));
    try {
      await writeLine(operations);
    } catch (err) {
      // A later commit must not resolve without these entries: they are changed still.
      for (const [section, keys] of changed) for (const key of keys) changes.mark(section, key);
      throw err;
    }
    if (journalBytes > Math.max(compactAfter, snapshotBytes) && !compacting && !closing) void compact().catch(() => undefined);
  };

  let scheduled: Promise<void> | null = null;
  const commit = (): Promise<void> => {
    if (closed) {
      // Rejected for whoever awaits it; a fire-and-forget commit (`void store.commit()`) after a shutdown must not
      // become an unhandled rejection that takes the process down.
      const refused = Promise.reject(new Error('the store is closed'));
      refused.catch(() => undefined);
      return refused;
    }
    // Coalesce: every change made before the scheduled write starts is carried by that one write.
    scheduled ??= enqueue(() => {
      scheduled = null;
      return append();
    });
    return scheduled;
  };

  let compacting: Promise<void> | null = null;
  const compact = (): Promise<void> => {
    compacting ??= (async () => {
      try {
        // From here on, commits go to a new journal; the snapshot covers everything before it.
        const next = await enqueue(async () => {
          await journal.close();
          generation += 1;
          journal = await open(journalPath(path, generation), 'a');
          journalOffset = 0;
          const before = journalBytes;
          journalBytes = 0;
          return { generation, before };
        });
        const snapshot = await writeSnapshot(path, next.generation, tracker.raw);
        // The snapshot may hold changes made while it was written; once they are in the new journal too, a crash
        // at any point below leaves snapshot + journal describing the same acknowledged state.
        await commit();
        await snapshot.install();
        await dropJournalsBefore(path, next.generation);
        snapshotBytes = snapshot.bytes;
        compactions += 1;
      } finally {
        compacting = null;
      }
    })();
    return compacting;
  };

  const store: Store = {
    get data() {
      return tracker.data;
    },
    kind: 'file',
    path,
    commit,
    async replace(next) {
      // A background compaction that failed is not this call's failure (the journal still holds everything).
      await compacting?.catch(() => undefined);
      // Changes already made (and maybe answered once their commit resolves) go to disk before the reset: if the
      // process dies before the reset's snapshot is in place, the old files must still hold them.
      await commit();
      tracker.reset(carryOver(tracker.raw(), next));
      changes.take();
      watchers.replaced();
      // One journal line replaces everything, in order with the commits before and after it: a crash leaves the
      // old data or the new, never the old with changes made to the new replayed onto it.
      await enqueue(() => writeLine([[RESET, '', tracker.raw()]]));
      // The old data's files are dead weight now: a fresh snapshot lets them go.
      await compact();
    },
    watch: watchers.watch,
    compact: async () => {
      // A background compaction that failed is not this call's failure (the journal still holds everything).
      await compacting?.catch(() => undefined);
      return compact();
    },
    async close() {
      if (closing) return;
      closing = true;
      // A background compaction that failed is not this call's failure (the journal still holds everything).
      await compacting?.catch(() => undefined);
      await commit();
      closed = true;
      await enqueue(() => journal.close());
    },
    stats: () => ({ snapshotBytes, journalBytes, generation, compactions }),
    peek: tracker.raw,
    onWrite: (stamp) => stamps.push(stamp),
  };
  // A store from before the journal is rewritten in the new format at once; a long journal is folded in.
  if (loaded.legacy) await compact();
  else if (journalBytes > Math.max(compactAfter, snapshotBytes)) void compact().catch(() => undefined);
  return store;
}

/**
 * What a replace (a reset) keeps of the store's own bookkeeping: the count of starts, so a seeded run does not
 * hand out, after a restart, ids it already used. Everything else is the new data's.
 */
function carryOver(current: StoreData, next: StoreData): StoreData {
  return current.starts === undefined || next.starts !== undefined ? next : { ...next, starts: current.starts };
}

function upgrade(data: StoreData, path: string | null): StoreData {
  const version = typeof data.schema_version === 'number' ? data.schema_version : 0;
  if (version > SCHEMA_VERSION) {
    throw new Error(`${path}: store schema version ${version} is newer than this emulator understands (${SCHEMA_VERSION})`);
  }
  // Fill in collections a file written by an older version may lack.
  const upgraded = { ...emptyData(), ...data, schema_version: SCHEMA_VERSION };
  if (version < 2) {
    // Version 1 had no task engine: its tasks get the default plan, started from their stored times.
    for (const stored of Object.values(upgraded.tasks) as Partial<StoredTask>[]) {
      const task = stored.task as StoredTask['task'];
      stored.created_ms ??= parseTime(task.created_at);
      stored.started_ms ??= task.started_at ? parseTime(task.started_at) : null;
      stored.plan ??= {
        scenario: 'default',
        queue_ms: 2_000,
        processing_ms: 10_000,
        outcome: 'succeeded',
        failure: null,
        cancelable_while_processing: false,
        output: null,
        settle: null,
      };
    }
  }
  return upgraded;
}
