import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The bytes of uploaded files, apart from the JSON store so it stays small: a folder beside the store file,
 * or memory for an in-memory emulator.
 */
export interface BlobStore {
  put(name: string, bytes: Buffer): void;
  get(name: string): Buffer | undefined;
  delete(name: string): void;
  clear(): void;
}

export function createBlobStore(dir: string | null): BlobStore {
  if (dir === null) {
    const blobs = new Map<string, Buffer>();
    return {
      put: (name, bytes) => void blobs.set(name, bytes),
      get: (name) => blobs.get(name),
      delete: (name) => void blobs.delete(name),
      clear: () => blobs.clear(),
    };
  }
  mkdirSync(dir, { recursive: true });
  // Names are the store's own random names ([A-Za-z0-9]+ and an extension), never user input.
  const path = (name: string): string => join(dir, name);
  return {
    put: (name, bytes) => writeFileSync(path(name), bytes),
    get(name) {
      try {
        return readFileSync(path(name));
      } catch {
        return undefined;
      }
    },
    delete: (name) => rmSync(path(name), { force: true }),
    clear() {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    },
  };
}
