import type { Clock } from '../clock/index.ts';
import type { Store } from '../store/index.ts';
import type { FilesRepo } from './records.ts';
import { isBlobName } from './blobs.ts';
import type { BlobStore } from './blobs.ts';

/**
 * Deletes files when they expire, on the clock: the address answers 404 from `expires_at` on, and the record
 * and bytes are gone so the store does not grow without bound. One clock job waits for the soonest expiry;
 * it deletes what is due in small batches and waits for the next, so a start costs nothing however many
 * files are stored.
 * @see reference "Conventions": result file addresses each have expires_at
 */
export interface FileKeeper {
  /** A file was just stored: its expiry may be sooner than the one waited for. */
  track(expiresMs: number): void;
  /** Waits for the soonest expiry of the store (after a start, a restart or a reset). */
  resume(): void;
}

const BATCH = 500;

export function createFileKeeper(clock: Clock, db: { store: Store; files: FilesRepo }, blobs: BlobStore): FileKeeper {
  let waitingFor: number | null = null;
  const wake = (atMs: number): void => {
    if (waitingFor !== null && waitingFor <= atMs) return;
    waitingFor = atMs;
    clock.at(atMs, (dueMs) => {
      if (waitingFor !== atMs) return;
      waitingFor = null;
      let count: number;
      do {
        const due = db.store.transaction(() => {
          const found = db.files.expiring(dueMs, BATCH);
          for (const file of found) db.files.delete(file.id);
          return found;
        });
        count = due.length;
        // Bytes go after the records that point at them are gone for good. A record whose name is no file name of
        // the blob store (an old store's, say) has no bytes there: nothing outside the folder is ever deleted.
        for (const file of due) if (file.source.kind === 'blob' && isBlobName(file.name)) blobs.delete(file.name);
      } while (count === BATCH);
      const next = db.files.nextExpiry();
      if (next !== undefined) wake(Math.max(next, dueMs));
    });
  };
  return {
    track: (expiresMs) => wake(expiresMs),
    resume() {
      waitingFor = null;
      const next = db.files.nextExpiry();
      if (next !== undefined) wake(next);
    },
  };
}
