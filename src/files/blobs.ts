import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/**
 * The bytes of uploaded files, apart from the JSON store so it stays small: a folder beside the store file,
 * or memory for an in-memory emulator. Every call takes a plain file name of that folder and nothing else:
 * any other name is refused with a BlobNameError before the file system is touched.
 */
export interface BlobStore {
  put(name: string, bytes: Buffer): void;
  get(name: string): Buffer | undefined;
  delete(name: string): void;
  clear(): void;
}

/** A name the blob store refuses: not a plain file name inside its folder. */
export class BlobNameError extends Error {
  constructor(readonly blobName: string) {
    super(`not a file name of the blob store: ${JSON.stringify(blobName)}`);
  }
}

/**
 * Letters, digits, `.`, `_` and `-`, starting with a letter or digit: no separator, no `..`, no NUL, no `%` (an
 * encoded form of any of them), never absolute. The emulator's own names (32 letters or digits and an extension)
 * are of this form; a name from anywhere else (an imported record, an address) may not be.
 */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** Whether the blob store takes `name`: a plain file name, which also stays inside any folder it is joined to. */
export const isBlobName = (name: unknown): name is string => typeof name === 'string' && PLAIN_NAME.test(name) && !name.includes('..');

/** `name` itself when the blob store takes it, else a BlobNameError. */
function checkedName(name: string): string {
  if (!isBlobName(name)) throw new BlobNameError(name);
  return name;
}

/** The path of `name` inside `dir`, resolved and checked to be a file of `dir` itself, or a BlobNameError. */
function pathIn(dir: string, name: string): string {
  checkedName(name);
  const path = resolve(dir, name);
  // The rule above already keeps a name inside; checked again on the resolved path, whatever the rule becomes.
  if (dirname(path) !== dir || basename(path) !== name) throw new BlobNameError(name);
  return path;
}

export function createBlobStore(folder: string | null): BlobStore {
  if (folder === null) {
    const blobs = new Map<string, Buffer>();
    return {
      put: (name, bytes) => void blobs.set(checkedName(name), bytes),
      get: (name) => blobs.get(checkedName(name)),
      delete: (name) => void blobs.delete(checkedName(name)),
      clear: () => blobs.clear(),
    };
  }
  const dir = resolve(folder);
  mkdirSync(dir, { recursive: true });
  return {
    put: (name, bytes) => writeFileSync(pathIn(dir, name), bytes),
    get(name) {
      const path = pathIn(dir, name);
      try {
        return readFileSync(path);
      } catch {
        return undefined;
      }
    },
    delete: (name) => rmSync(pathIn(dir, name), { force: true }),
    clear() {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    },
  };
}
