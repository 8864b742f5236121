import { ApiError } from '../../errors/index.ts';
import { addFile, fileByName, fileView, fixtureBytes, isBlobName } from '../../files/index.ts';
import type { ApiDeps, Caller } from './deps.ts';

export interface Upload {
  filename: string;
  mimeType: string;
  bytes: Buffer;
  duration: number | null;
  width: number | null;
  height: number | null;
}

/** The largest input file any model takes (videos and audio, 50MB). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** Uploaded files, and the emulator's file storage. @see reference "Other endpoints": POST /v1/files */
export function filesApi(deps: ApiDeps) {
  const { db, clock, config } = deps;
  return {
    /** Stores an uploaded file until its retention ends; `accepted` runs inside the transaction that adds it. */
    uploadFile(caller: Caller, upload: Upload, accepted?: () => void): Record<string, unknown> {
      if (upload.bytes.length > MAX_UPLOAD_BYTES) throw new ApiError('payload_too_large', 'The file is larger than 50MB.');
      const file = db.store.transaction(() => {
        const added = addFile(db, deps.random, clock.now(), config.fileRetentionMs, {
          accountId: caller.account.id,
          filename: upload.filename,
          mimeType: upload.mimeType,
          size: upload.bytes.length,
          duration: upload.duration,
          width: upload.width,
          height: upload.height,
          source: { kind: 'blob' },
        });
        // The bytes before the record that points at them is committed: a crash between leaves only stray bytes.
        deps.blobs.put(added.name, upload.bytes);
        accepted?.();
        return added;
      });
      deps.files.track(file.expires_ms);
      return fileView(file, config.publicUrl);
    },
    /**
     * A stored file's type and bytes by its name, or 404 from `expires_at` on. Only a plain file name is looked
     * up: `..`, separators, NUL or their encoded forms never reach the store.
     */
    readFile(name: string): { mimeType: string; bytes: Buffer } {
      const file = isBlobName(name) ? fileByName(db, name, clock.now()) : undefined;
      const bytes = !file ? undefined : file.source.kind === 'blob' ? deps.blobs.get(file.name) : fixtureBytes(file.source.fixture);
      if (!file || !bytes) throw new ApiError('not_found', 'No such file, or it has expired.');
      return { mimeType: file.mime_type, bytes };
    },
  };
}
