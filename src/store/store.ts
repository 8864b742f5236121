import { parseTime } from '../clock/time-format.ts';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low, Memory } from 'lowdb';
import { DataFile } from 'lowdb/node';
import { emptyData, SCHEMA_VERSION } from './schema.ts';
import type { StoreData, StoredTask } from './schema.ts';

/**
 * The embedded store: lowdb over a JSON file (written atomically: temp file, then rename) or over memory.
 * Domain code changes `data` synchronously, so a check-then-change never interleaves with another request,
 * then awaits `commit()` before answering, so every acknowledged change is on disk.
 */
export interface Store {
  readonly data: StoreData;
  readonly kind: 'file' | 'memory';
  readonly path: string | null;
  /** Resolves once a write that contains every change made so far has completed. */
  commit(): Promise<void>;
  /** Replaces everything with `next` (reset) and commits. */
  replace(next: StoreData): Promise<void>;
}

export interface StoreOptions {
  /** JSON file path; omit for an in-memory store. */
  path?: string;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const path = options.path ?? null;
  if (path) await mkdir(dirname(path), { recursive: true });
  const adapter = path
    ? new DataFile<StoreData>(path, { parse: JSON.parse, stringify: (data) => JSON.stringify(data) })
    : new Memory<StoreData>();
  const db = new Low<StoreData>(adapter, emptyData());
  await db.read();
  db.data = upgrade(db.data, path);

  let scheduled: Promise<void> | null = null;
  let chain: Promise<void> = Promise.resolve();

  const commit = (): Promise<void> => {
    // Coalesce: every change made before the scheduled write starts is carried by that one write.
    if (!scheduled) {
      const write = chain.then(() => {
        scheduled = null;
        return db.write();
      });
      scheduled = write;
      chain = write.catch(() => undefined);
    }
    return scheduled;
  };

  return {
    get data() {
      return db.data;
    },
    kind: path ? 'file' : 'memory',
    path,
    commit,
    replace(next) {
      db.data = next;
      return commit();
    },
  };
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
