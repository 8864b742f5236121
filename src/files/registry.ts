import { formatTime } from '../clock/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { FilesRepo, StoredFile } from './records.ts';
import { extensionOf, kindOf } from './kinds.ts';

/** Where the emulator's own files are served: `{public url}/files/{name}`. */
export const FILES_PATH = '/files/';

export interface NewFile {
  accountId: string;
  filename: string;
  mimeType: string;
  size: number;
  duration?: number | null;
  width?: number | null;
  height?: number | null;
  source: StoredFile['source'];
}

/** Records a file under a fresh `file_<number>` id and an unguessable name. */
export function addFile(db: { files: FilesRepo }, random: Random, nowMs: number, retentionMs: number, spec: NewFile): StoredFile {
  return db.files.insert({
    account_id: spec.accountId,
    name: `${ids.fileName(random)}.${extensionOf(spec.mimeType)}`,
    filename: spec.filename,
    type: kindOf(spec.mimeType),
    mime_type: spec.mimeType,
    size: spec.size,
    duration: spec.duration ?? null,
    width: spec.width ?? null,
    height: spec.height ?? null,
    created_at: formatTime(nowMs),
    expires_ms: nowMs + retentionMs,
    source: spec.source,
  });
}

export const fileUrl = (publicUrl: string, file: StoredFile): string => `${publicUrl}${FILES_PATH}${file.name}`;

/** The upload answer. @see openapi/service.yaml#/components/schemas/UploadedFile */
export function fileView(file: StoredFile, publicUrl: string): Record<string, unknown> {
  return {
    id: file.id,
    object: 'file',
    url: fileUrl(publicUrl, file),
    filename: file.filename,
    type: file.type,
    mime_type: file.mime_type,
    size: file.size,
    duration: file.duration,
    width: file.width,
    height: file.height,
    created_at: file.created_at,
    expires_at: formatTime(file.expires_ms),
  };
}

/** A live file by its served name (expired files are gone even before they are pruned). */
export function fileByName(db: { files: FilesRepo }, name: string, nowMs: number): StoredFile | undefined {
  const file = db.files.byName(name);
  return file && file.expires_ms > nowMs ? file : undefined;
}

/**
 * The file a task parameter points at: `file_<number>` or the emulator's own address, of this account and not
 * expired. Undefined when the address is not one of the emulator's.
 */
export function ownFile(
  db: { files: FilesRepo },
  address: string,
  publicUrl: string,
): { file: StoredFile | undefined; own: boolean } {
  if (/^file_[0-9]+$/.test(address)) {
    return { file: db.files.get(address), own: true };
  }
  const prefix = `${publicUrl}${FILES_PATH}`;
  if (!address.startsWith(prefix)) return { file: undefined, own: false };
  return { file: db.files.byName(address.slice(prefix.length)), own: true };
}
