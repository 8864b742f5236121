import { createReadStream } from 'node:fs';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { KEYED_SECTIONS, LIST_SECTIONS, TOP } from './changes.ts';
import { emptyData } from './schema.ts';
import type { StoreData } from './schema.ts';

/**
 * The file store on disk: a snapshot and the journals written after it, all line-delimited JSON.
 *
 * - `db.json` (the snapshot): a header line `{"format":"svc-emulator-store","version":1,"generation":G}`, then
 *   one `[section, key, value]` line per stored entry.
 * - `db.json.N.journal` (N ≥ G): one line per commit, the array of that commit's operations: `[section, key,
 *   value]` puts an entry, `[section, key]` deletes it. A line is written by one append, so it is applied whole
 *   or (torn by a crash mid-write: no newline, or not JSON) not at all. A reset is one operation too,
 *   `["!reset", "", data]`, so it takes effect in order with the commits around it.
 *
 * Loading replays the snapshot, then every journal from G on, in order. Journals below G are leftovers of a
 * compaction that stopped between writing the snapshot and deleting them, and are ignored.
 */

export const FORMAT = 'svc-emulator-store';
export const FORMAT_VERSION = 1;

/** The section of a journal line that replaces all the data (a reset): `["!reset", "", data]`. */
export const RESET = '!reset';

/** One change: put (three elements) or delete (two). */
export type Operation = [section: string, key: string, value: unknown] | [section: string, key: string];

export const journalPath = (path: string, generation: number): string => `${path}.${generation}.journal`;

export interface Loaded {
  data: StoreData;
  /** The snapshot's generation (0 when there is none yet). */
  generation: number;
  /** Journals found, oldest first. */
  journals: { generation: number; path: string; bytes: number }[];
  snapshotBytes: number;
  /** The file is a single JSON document of an earlier version (lowdb's own format), read whole. */
  legacy: boolean;
}

export class StoreFileError extends Error {}

/** Reads the snapshot and replays its journals. */
export async function loadStoreFile(path: string): Promise<Loaded> {
  const data = emptyData();
  let generation = 0;
  let snapshotBytes = 0;
  let legacy = false;
  const snapshot = await stat(path).catch(() => null);
  if (snapshot) {
    snapshotBytes = snapshot.size;
    let first = true;
    await eachLine(path, (line, lineNo) => {
      if (first) {
        first = false;
        const header = parseLine(path, lineNo, line) as Record<string, unknown> | null;
        if (header?.['format'] === FORMAT) {
          if (header['version'] !== FORMAT_VERSION) throw new StoreFileError(`${path}: store file format version ${String(header['version'])} is not ${FORMAT_VERSION}`);
          generation = Number(header['generation']) || 0;
          return;
        }
        // Stores written before the journal were one JSON document on one line (lowdb's JSON file).
        if (header && typeof header === 'object' && !Array.isArray(header)) {
          Object.assign(data, header);
          legacy = true;
          return;
        }
        throw new StoreFileError(`${path}:1: not a store file`);
      }
      if (legacy) throw new StoreFileError(`${path}:${lineNo}: not a store file`);
      apply(data, parseLine(path, lineNo, line) as Operation);
    });
  }
  const journals = (await listJournals(path)).filter((j) => j.generation >= generation);
  for (const journal of journals) {
    await eachLine(journal.path, (line, lineNo, last) => {
      let operations: Operation[];
      try {
        operations = JSON.parse(line) as Operation[];
      } catch {
        // Only the last line can be torn: a crash stopped its append. Anything earlier is damage.
        if (last) return;
        throw new StoreFileError(`${journal.path}:${lineNo}: damaged journal line`);
      }
      for (const operation of operations) apply(data, operation);
    });
  }
  return { data, generation, journals, snapshotBytes, legacy };
}

function parseLine(path: string, lineNo: number, line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new StoreFileError(`${path}:${lineNo}: damaged line`);
  }
}

const keyed = new Set<string>(KEYED_SECTIONS);
const lists = new Set<string>(LIST_SECTIONS);

/** Applies one operation; keys are defined as own properties, so an id such as `__proto__` stays an id. */
export function apply(data: StoreData, operation: Operation): void {
  const [section, key] = operation;
  if (section === RESET) {
    // Everything before it is replaced, in journal order: later lines apply to the new data.
    for (const name of Object.keys(data)) delete (data as unknown as Record<string, unknown>)[name];
    Object.assign(data, emptyData(), operation[2]);
    return;
  }
  const put = operation.length === 3;
  const target = (section === TOP ? data : (data as unknown as Record<string, unknown>)[section]) as Record<string, unknown> | unknown[] | undefined;
  if (section !== TOP && !keyed.has(section) && !lists.has(section)) return;
  if (!target || typeof target !== 'object') return;
  if (put) {
    const value = operation[2];
    if (Array.isArray(target)) target[Number(key)] = value;
    else if (key !== '__proto__') target[key] = value;
    else Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else if (!Array.isArray(target)) {
    delete target[key];
  }
}

/** Calls `onLine` for each complete line; the last one is flagged when the file does not end with a newline. */
async function eachLine(path: string, onLine: (line: string, lineNo: number, last: boolean) => void): Promise<void> {
  let rest = '';
  let lineNo = 0;
  // Strings, not one big buffer: a store can pass V8's longest string, so it is never read whole.
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const text = rest + (chunk as string);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      lineNo += 1;
      if (end > start) onLine(text.slice(start, end), lineNo, false);
      start = end + 1;
    }
    rest = text.slice(start);
  }
  if (rest.trim() !== '') onLine(rest, lineNo + 1, true);
}

async function listJournals(path: string): Promise<Loaded['journals']> {
  const dir = dirname(path);
  const prefix = `${basename(path)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  const found: Loaded['journals'] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.journal')) continue;
    const generation = Number(name.slice(prefix.length, -'.journal'.length));
    if (!Number.isInteger(generation) || generation < 0) continue;
    const full = join(dir, name);
    found.push({ generation, path: full, bytes: (await stat(full)).size });
  }
  return found.sort((a, b) => a.generation - b.generation);
}

/** Deletes the journals a snapshot of `generation` makes redundant. */
export async function dropJournalsBefore(path: string, generation: number): Promise<void> {
  for (const journal of await listJournals(path)) {
    if (journal.generation < generation) await rm(journal.path, { force: true });
  }
}

/** The operation that writes `section`/`key` as `data` holds it now: a put, or a delete when it is gone. */
export function operationOf(data: StoreData, section: string, key: string): Operation {
  const top = data as unknown as Record<string, unknown>;
  const container = (section === TOP ? top : top[section]) as Record<string, unknown> | unknown[];
  if (Array.isArray(container)) {
    const index = Number(key);
    return index < container.length ? [section, key, container[index]] : [section, key];
  }
  return Object.hasOwn(container, key) ? [section, key, container[key]] : [section, key];
}

/** Every operation that rebuilds `data`, in an order that replays to the same data (insertion order kept). */
export function* operationsOf(data: StoreData): Generator<Operation> {
  const top = data as unknown as Record<string, unknown>;
  for (const name of Object.keys(top)) {
    if (!keyed.has(name) && !lists.has(name)) yield [TOP, name, top[name]];
  }
  // Sections go in as empty containers first so a store with an empty section still has it after a load.
  for (const name of [...KEYED_SECTIONS, ...LIST_SECTIONS]) {
    const section = top[name] as Record<string, unknown> | unknown[];
    if (Array.isArray(section)) {
      for (let i = 0; i < section.length; i += 1) yield [name, String(i), section[i]];
    } else {
      // Keys are taken up front; one deleted while a snapshot is being written is skipped, not written as null.
      for (const key of Object.keys(section)) if (Object.hasOwn(section, key)) yield [name, key, section[key]];
    }
  }
}

/**
 * Writes a snapshot of `current()` as of generation `generation`: to a temporary file in chunks, handing the event
 * loop back between chunks so requests keep being served, then synced and renamed into place by `install`.
 * Entries changed while it runs may be written in either state; the journal of `generation` has them.
 */
export async function writeSnapshot(path: string, generation: number, current: () => StoreData): Promise<{ bytes: number; install(): Promise<void> }> {
  const temporary = `${path}.tmp`;
  const handle = await open(temporary, 'w');
  let bytes = 0;
  try {
    let chunk = `${JSON.stringify({ format: FORMAT, version: FORMAT_VERSION, generation })}\n`;
    for (const operation of operationsOf(current())) {
      chunk += `${JSON.stringify(operation)}\n`;
      if (chunk.length >= 1 << 20) {
        bytes += await writeAll(handle, chunk);
        chunk = '';
      }
    }
    bytes += await writeAll(handle, chunk);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return {
    bytes,
    async install() {
      await rename(temporary, path);
      await syncDirectory(dirname(path));
    },
  };
}

/** Writes all of `text` (a write may take only part of it). */
export async function writeAll(handle: FileHandle, text: string): Promise<number> {
  const buffer = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset);
    offset += bytesWritten;
  }
  return buffer.length;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // Some file systems cannot sync a directory; the rename itself is still atomic.
  } finally {
    await handle.close();
  }
}
