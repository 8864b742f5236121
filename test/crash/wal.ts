import { openSync, closeSync, readSync, readFileSync, watch } from 'node:fs';
import { endianness } from 'node:os';
import { basename, dirname } from 'node:path';

/**
 * Where SQLite's write-ahead log was when the process was killed, read from the files it left (before anything
 * opens the store again). The store (`--db PATH`, WAL mode) appends every commit to `PATH-wal`; the main file
 * `PATH` is written only by a checkpoint, which copies the log's pages into it once the log holds 1000 pages (done
 * inside the commit that crossed the line), syncs it, and only then says so in the wal-index `PATH-shm`. So a
 * change of the main file is a checkpoint under way, and the wal-index tells how far the last one got.
 * @see https://www.sqlite.org/walformat.html (the wal-index header and the checkpoint info)
 */

export interface WalIndex {
  /** Frames of the log that committed transactions cover (the last commit's frame). */
  mxFrame: number;
  /** Frames copied into the main file by the last checkpoint that finished (set once it has synced). */
  nBackfill: number;
  /** Frames the last checkpoint set out to copy (set before it writes the first page). */
  nBackfillAttempted: number;
}

/** The wal-index header and checkpoint info, in the machine's byte order; null without a wal-index. */
export function walIndex(db: string): WalIndex | null {
  let shm: Buffer;
  try {
    shm = readFileSync(`${db}-shm`);
  } catch {
    return null;
  }
  if (shm.length < 136) return null;
  const u32 = (offset: number): number => (endianness() === 'LE' ? shm.readUInt32LE(offset) : shm.readUInt32BE(offset));
  return { mxFrame: u32(16), nBackfill: u32(96), nBackfillAttempted: u32(128) };
}

/** Frames written to the log after its last commit, in the log's current generation: a transaction the kill cut. */
export function framesPastLastCommit(db: string, index: WalIndex): number {
  let fd: number;
  try {
    fd = openSync(`${db}-wal`, 'r');
  } catch {
    return 0;
  }
  try {
    const header = Buffer.alloc(32);
    if (readSync(fd, header, 0, 32, 0) < 32) return 0;
    const pageSize = header.readUInt32BE(8) === 1 ? 65536 : header.readUInt32BE(8);
    const salts = [header.readUInt32BE(16), header.readUInt32BE(20)];
    const frame = Buffer.alloc(24);
    let count = 0;
    // A frame of this generation carries the log header's salts; one left from before the log restarted does not.
    for (let i = index.mxFrame; ; i += 1) {
      if (readSync(fd, frame, 0, 24, 32 + i * (24 + pageSize)) < 24) return count;
      if (frame.readUInt32BE(8) !== salts[0] || frame.readUInt32BE(12) !== salts[1]) return count;
      count += 1;
    }
  } finally {
    closeSync(fd);
  }
}

/** Where the kill left the log, in words, from the wal-index and the log itself. */
export function walStage(db: string): string {
  const index = walIndex(db);
  if (!index) return 'no wal-index';
  const cut = framesPastLastCommit(db, index);
  const tail = cut > 0 ? `; a transaction cut with ${cut} frames written` : '';
  if (index.nBackfillAttempted > index.nBackfill) {
    return `inside a checkpoint (${index.nBackfillAttempted - index.nBackfill} frames being copied into the store file)${tail}`;
  }
  if (index.mxFrame > 0 && index.nBackfill === index.mxFrame) return `just after a checkpoint (every frame in the store file)${tail}`;
  return `between checkpoints (${index.mxFrame - index.nBackfill} frames in the log alone)${tail}`;
}

/**
 * Resolves true at the next change of `file` in the store's folder (`store.db`: a checkpoint is copying pages into
 * it; `store.db-wal`: a transaction is being written to the log), or false after `timeoutMs`. The watch begins
 * when this is called.
 */
export function nextWrite(file: string, timeoutMs: number): Promise<boolean> {
  const watcher = watch(dirname(file));
  return new Promise<boolean>((resolve) => {
    const done = (written: boolean): void => {
      clearTimeout(timer);
      watcher.close();
      resolve(written);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    watcher.on('change', (_event, name) => {
      if (name === basename(file)) done(true);
    });
  });
}
