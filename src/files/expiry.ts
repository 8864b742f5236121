import type { Clock } from '../clock/index.ts';
import type { Store, StoredFile } from '../store/index.ts';
import type { BlobStore } from './blobs.ts';
import { removeFile } from './registry.ts';

/**
 * Deletes files when they expire, on the clock: the address answers 404 from `expires_at` on, and the record
 * and bytes are gone so the store does not grow without bound.
 * @see reference "Conventions": result file addresses each have expires_at
 */
export interface FileKeeper {
  track(file: StoredFile): void;
  /** Schedules every stored file (after a start or restart). */
  resume(): void;
}

export function createFileKeeper(clock: Clock, store: Store, blobs: BlobStore): FileKeeper {
  const track = (file: StoredFile): void => {
    clock.at(file.expires_ms, () => {
      // The store may have been reset since: only the file recorded under this id and name goes.
      const current = store.data.files[file.id];
      if (current?.name !== file.name) return;
      removeFile(store.data, file.id);
      if (file.source.kind === 'blob') blobs.delete(file.name);
      void store.commit();
    });
  };
  return {
    track,
    resume: () => Object.values(store.data.files).forEach(track),
  };
}
