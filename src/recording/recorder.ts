import { link, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactTime, machineNow } from '../clock/index.ts';
import type { EndedExchange } from '../wire/index.ts';
import { VERSION } from '../version.ts';
import { harEntry } from './entry.ts';
import { ensureFolder } from './folder.ts';
import type { RecordedEntry } from './entry.ts';
import type { Har, HarPage } from './har.ts';

export interface RecorderOptions {
  /** The directory the recording goes to (made if missing). */
  dir: string;
  /** Keep prompts and outputs as they were; secrets are left out either way. */
  keepContent?: boolean;
  /** The upstream recorded from, for the log's comment. */
  upstream: string;
  /** The machine's time in ms, for the file's name (default: the machine clock). */
  now?: () => number;
  /** At most this long (ms) between an exchange and the rewrite of the file that holds it (default 250). */
  writeDelayMs?: number;
  /** Where a failed write is reported (default: stderr); the next write tries again. */
  log?: (line: string) => void;
}

export interface Recorder {
  /** The proxy's `onExchange`: adds the ended exchange and schedules a rewrite of the file. */
  onExchange(ended: EndedExchange): void;
  /** Writes what is left and stops; resolves with the files written (none when nothing was recorded). */
  close(): Promise<string[]>;
}

let recorders = 0;

const INDENT = '      ';
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Records a proxy run into one HAR file in `dir`, named by the run's start (`recording-<yyMMddHHmmss>.har`, with
 * `-2`, `-3`... when taken). Entries are appended a moment after their exchange ends: each write puts the new
 * entries and the file's closing part (the pages, which come after the entries) at the end in one write, so the
 * file is valid HAR between writes and a killed proxy leaves one that lacks at most the last moment's exchanges.
 * Nothing is kept once written: a recording of hours costs the proxy no memory and each write only its own bytes.
 * On close the entries are put in request order (they are appended as exchanges end; a stream outlives the polls
 * around it). Each task is a page; its exchanges carry its id as `pageref`.
 */
export function createRecorder(options: RecorderOptions): Recorder {
  const now = options.now ?? machineNow;
  const keepContent = options.keepContent ?? false;
  const delay = options.writeDelayMs ?? 250;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const stamp = compactTime(now());
  ensureFolder(options.dir);

  /** Entries waiting for the next write. */
  const pending: RecordedEntry[] = [];
  const pages = new Map<string, { page: HarPage; startedMs: number }>();
  let file: { path: string; handle: FileHandle; entriesEnd: number } | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();
  let lastError: Error | null = null;

  const addPage = (recorded: RecordedEntry): void => {
    const task = recorded.task;
    if (!task) return;
    let known = pages.get(task.id);
    // A task is a page once an answer shows it exists (or it was submitted in this run); a 404 is not one.
    if (!known) {
      if (!task.fromAnswer) return;
      known = { page: { startedDateTime: recorded.entry.startedDateTime, id: task.id, title: task.id, pageTimings: {} }, startedMs: recorded.startedMs };
      pages.set(task.id, known);
    }
    if (recorded.startedMs < known.startedMs) {
      known.startedMs = recorded.startedMs;
      known.page.startedDateTime = recorded.entry.startedDateTime;
    }
    if (task.model && known.page._svcEmulator?.model === undefined) {
      known.page._svcEmulator = { model: task.model };
      known.page.title = `${task.id} (${task.model})`;
    }
  };

  const head = (): string => {
    const log: Omit<Har['log'], 'entries' | 'pages'> = {
      version: '1.2',
      creator: { name: 'svc-emulator', version: VERSION },
      comment: `Recorded by svc-emulator proxy from ${options.upstream}; secrets left out, prompts and outputs ${keepContent ? 'kept' : 'x-ed out'}.`,
      _svcEmulator: { upstream: options.upstream, keepContent },
    };
    const text = JSON.stringify({ log }, null, 2);
    return `${text.slice(0, text.lastIndexOf('\n  }'))},\n    "entries": [`;
  };

  /** What follows the entries: the end of the list, the pages in order of their first exchange, the end of the log. */
  const tail = (): string => {
    const list = [...pages.values()].sort((a, b) => a.startedMs - b.startedMs).map((p) => p.page);
    const text = JSON.stringify(list, null, 2).replace(/\n/g, '\n    ');
    return `\n    ],\n    "pages": ${text}\n  }\n}\n`;
  };

  const serialized = (recorded: RecordedEntry): string => {
    const pageref = recorded.task && pages.has(recorded.task.id) ? recorded.task.id : null;
    const entry = pageref === null ? recorded.entry : { pageref, ...recorded.entry };
    return `${INDENT}${JSON.stringify(entry, null, 2).replace(/\n/g, `\n${INDENT}`)}`;
  };

  /**
   * Creates the recording with its first content. A hard link from a file written whole elsewhere claims the name
   * in one step: the file appears complete (a reader never sees it empty) and never replaces someone else's. The
   * file is written in the system's temporary folder, so nothing half-made stands in DIR even for a moment; where
   * that is another filesystem, beside the recording; where there are no hard links, an exclusive create and a write.
   */
  const claim = async (content: Buffer): Promise<{ path: string; handle: FileHandle }> => {
    const name = `.recording-${stamp}-${process.pid}-${++recorders}.tmp`;
    for (const temp of [join(tmpdir(), name), join(options.dir, name)]) {
      await writeFile(temp, content);
      try {
        const claimed = await linkFirstFree(temp);
        if (claimed !== null) return { path: claimed, handle: await open(claimed, 'r+') };
      } finally {
        await unlink(temp).catch(() => undefined);
      }
    }
    return createFirstFree(content);
  };

  /** The first free name linked to `temp`; null when the filesystem cannot link it there. */
  const linkFirstFree = async (temp: string): Promise<string | null> => {
    for (let n = 1; ; n++) {
      const path = candidate(n);
      try {
        await link(temp, path);
        return path;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') continue;
        if (NO_HARD_LINKS.has(code)) return null;
        throw err;
      }
    }
  };

  const createFirstFree = async (content: Buffer): Promise<{ path: string; handle: FileHandle }> => {
    for (let n = 1; ; n++) {
      const path = candidate(n);
      try {
        const handle = await open(path, 'wx');
        await handle.write(content, 0, content.length, 0);
        return { path, handle };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
    }
  };

  const candidate = (n: number): string => join(options.dir, `recording-${stamp}${n === 1 ? '' : `-${n}`}.har`);

  const write = async (): Promise<void> => {
    if (pending.length === 0) return;
    const batch = pending.splice(0).sort((a, b) => a.startedMs - b.startedMs);
    try {
      const entries = batch.map(serialized).join(',\n');
      const closing = Buffer.from(tail());
      if (file === null) {
        const start = Buffer.from(`${head()}\n${entries}`);
        file = { ...(await claim(Buffer.concat([start, closing]))), entriesEnd: start.length };
      } else {
        const added = Buffer.from(`,\n${entries}`);
        // One write of the new entries and the closing part, where the closing part began: valid before and after.
        await file.handle.write(Buffer.concat([added, closing]), 0, added.length + closing.length, file.entriesEnd);
        file.entriesEnd += added.length;
        await file.handle.truncate(file.entriesEnd + closing.length);
      }
      lastError = null;
    } catch (err) {
      pending.unshift(...batch);
      lastError = err as Error;
      log(`recorder: could not write the recording in ${options.dir}: ${(err as Error).message}`);
    }
  };

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    writing = writing.then(write);
    return writing;
  };

  /** The finished file in request order, written beside it and renamed over it. */
  const sortInPlace = async (path: string): Promise<void> => {
    const har = JSON.parse(await readFile(path, 'utf8')) as Har;
    const order = har.log.entries.map((entry, i) => ({ entry, i, at: Date.parse(entry.startedDateTime) }));
    if (order.every((e, i) => i === 0 || (order[i - 1]?.at ?? 0) <= e.at)) return;
    order.sort((a, b) => a.at - b.at || a.i - b.i);
    const { entries: _entries, pages: list, ...rest } = har.log;
    const text = JSON.stringify({ log: { ...rest, entries: order.map((e) => e.entry), pages: list } }, null, 2);
    const temp = `${path}.sorting`;
    await writeFile(temp, `${text}\n`);
    await rename(temp, path);
  };

  return {
    onExchange(ended) {
      if (closed) return;
      const recorded = harEntry(ended, { keepContent });
      addPage(recorded);
      pending.push(recorded);
      if (!timer) {
        timer = setTimeout(() => void flush(), delay);
        // A pending write never keeps the process alive; close() writes the rest.
        timer.unref();
      }
    },
    async close() {
      if (!closed) {
        closed = true;
        await flush();
        if (file) {
          await file.handle.close();
          if (lastError === null) await sortInPlace(file.path);
        }
        if (lastError) throw lastError;
      } else await writing;
      return file === null ? [] : [file.path];
    },
  };
}
