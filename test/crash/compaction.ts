import { watch } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { adminOf } from './emulator-process.ts';
import type { CliEmulator } from './emulator-process.ts';

/**
 * A kill inside a compaction. The store compacts (writes a fresh snapshot `db.json` beside the journals, renames it
 * into place, then deletes the journals it covers) in the background once the journal outgrows max(--compact-after-mb,
 * the snapshot), and when a reset replaces everything. Where a compaction is, is seen in the files.
 */

export interface StoreFiles {
  /** The generation in the snapshot's header; null when there is no snapshot yet. */
  snapshot: number | null;
  journals: number[];
  /** A snapshot being written (`db.json.tmp`). */
  writing: boolean;
}

export async function storeFiles(db: string): Promise<StoreFiles> {
  const names = await readdir(dirname(db));
  const prefix = `${basename(db)}.`;
  const journals = names
    .filter((n) => n.startsWith(prefix) && n.endsWith('.journal'))
    .map((n) => Number(n.slice(prefix.length, -'.journal'.length)))
    .sort((a, b) => a - b);
  let snapshot: number | null = null;
  if (names.includes(basename(db))) {
    const handle = await open(db, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(200), 0, 200, 0);
      const header = JSON.parse(buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '') as { generation: number };
      snapshot = header.generation;
    } finally {
      await handle.close();
    }
  }
  return { snapshot, journals, writing: names.includes(`${basename(db)}.tmp`) };
}

/** Where the last compaction since `before` was when the process was killed, judged from the files it left. */
export function stageOf(before: StoreFiles, after: StoreFiles): string {
  // A compaction begins by switching to a journal of its own, the newest; its snapshot bears that generation.
  const newest = Math.max(...after.journals);
  if (newest <= Math.max(...before.journals)) return 'no compaction had begun';
  if (after.snapshot !== newest) return after.writing ? 'while the new snapshot was written' : 'before the new snapshot was renamed into place';
  if (after.journals.some((g) => g < newest)) return 'after the new snapshot was in place, before the old journals were deleted';
  return 'after the compaction ended';
}

/** Resolves when a compaction starts writing its snapshot (its temporary file appears), or after `timeoutMs`. */
export async function compactionStarts(db: string, timeoutMs: number): Promise<void> {
  const watcher = watch(dirname(db));
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      watcher.on('change', (_event, file) => {
        if (file !== `${basename(db)}.tmp`) return;
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    watcher.close();
  }
}

/** Where in a reset's compaction the process is killed: as its snapshot is written, or once it is in place. */
export type KillPoint = 'writing' | 'in place';

/**
 * Sends a reset and kills the process the moment its compaction reaches `point` (seen as the temporary file's
 * creation, or the rename of the snapshot into place), or once the reset is answered if that comes first.
 */
export async function killInsideReset(cli: CliEmulator, db: string, point: KillPoint): Promise<{ acknowledged: boolean }> {
  const watcher = watch(dirname(db));
  const name = point === 'writing' ? `${basename(db)}.tmp` : basename(db);
  const reached = new Promise<void>((resolve) =>
    watcher.on('change', (_event, file) => {
      if (file === name) resolve();
    }),
  );
  const acknowledged = adminOf(cli).post('/_emulator/reset').then(
    (reply) => reply.status === 200,
    () => false,
  );
  await Promise.race([reached, acknowledged]);
  cli.child.kill('SIGKILL');
  watcher.close();
  await cli.exited;
  return { acknowledged: await acknowledged };
}
