import type { Store } from '../store/index.ts';
import { body } from '../store/index.ts';
import type { MediaFixture } from './fixtures.ts';

/** A file of the service's own storage: an upload, or a result file of a task. */
export interface StoredFile {
  id: string;
  account_id: string;
  /** The unguessable name in the file's address. */
  name: string;
  filename: string;
  type: string;
  mime_type: string;
  size: number;
  duration: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  expires_ms: number;
  /**
   * Where the bytes are: an uploaded blob, or media of the emulator's own (result files), which for generated
   * media is the description the same bytes are made from again.
   */
  source: { kind: 'blob' } | { kind: 'fixture'; fixture: MediaFixture };
}

export interface FilesRepo {
  get(id: string): StoredFile | undefined;
  byName(name: string): StoredFile | undefined;
  /** Stores a new file under the next `file_<number>` id. */
  insert(file: Omit<StoredFile, 'id'>): StoredFile;
  /** Writes a file under its own id (a state import). */
  restore(file: StoredFile): void;
  delete(id: string): void;
  /** Files expiring at or before `atMs`, soonest first, at most `limit`. */
  expiring(atMs: number, limit: number): StoredFile[];
  /** When the next file expires, if any is stored. */
  nextExpiry(): number | undefined;
}

export function filesRepo(store: Store): FilesRepo {
  const { driver } = store;
  const write = (file: StoredFile): void =>
    void driver
      .prepare('INSERT INTO files (id, name, account_id, expires_ms, body) VALUES (?, ?, ?, ?, ?)')
      .run(file.id, file.name, file.account_id, file.expires_ms, JSON.stringify(file));
  return {
    get: (id) => body<StoredFile>(driver.prepare('SELECT body FROM files WHERE id = ?').get(id)),
    byName: (name) => body<StoredFile>(driver.prepare('SELECT body FROM files WHERE name = ?').get(name)),
    insert(spec) {
      // The number is the store's own sequence, never reused after a delete or a reset.
      const next = (store.meta.get<number>('file_seq') ?? 0) + 1;
      store.meta.set('file_seq', next);
      const file: StoredFile = { id: `file_${next}`, ...spec };
      write(file);
      return file;
    },
    restore: (file) => write(file),
    delete: (id) => void driver.prepare('DELETE FROM files WHERE id = ?').run(id),
    expiring: (atMs, limit) =>
      driver.prepare('SELECT body FROM files WHERE expires_ms <= ? ORDER BY expires_ms LIMIT ?').all(atMs, limit).map((row) => JSON.parse(row[0] as string) as StoredFile),
    nextExpiry() {
      const value = driver.prepare('SELECT min(expires_ms) FROM files').get()?.[0];
      return value === null || value === undefined ? undefined : Number(value);
    },
  };
}
