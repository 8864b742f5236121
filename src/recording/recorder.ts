import { mkdirSync } from 'node:fs';
import { link, open, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compactTime, machineNow } from '../clock/index.ts';
import type { EndedExchange } from '../proxy/exchange.ts';
import { VERSION } from '../version.ts';
import { harEntry } from './entry.ts';
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

/** An entry and its text in the file, at the depth of `log.entries` items. */
type Stored = RecordedEntry & { json: string | null; jsonPageref: string | null };
const INDENT = '      ';
const EMPTY_ENTRIES = '"entries": []';
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Records a proxy run into one HAR file in `dir`, named by the run's start (`recording-<yyMMddHHmmss>.har`, with
 * `-2`, `-3`... when taken). The file is rewritten whole, a moment after each exchange (one write at a time), by
 * writing a temporary file and renaming it over the last: a proxy killed at any point leaves a valid file that
 * lacks at most the last moment's exchanges. Each task is a page; its exchanges carry its id as `pageref`.
 */
export function createRecorder(options: RecorderOptions): Recorder {
  const now = options.now ?? machineNow;
  const keepContent = options.keepContent ?? false;
  const delay = options.writeDelayMs ?? 250;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const stamp = compactTime(now());
  mkdirSync(options.dir, { recursive: true });
  const temp = join(options.dir, `.recording-${stamp}-${process.pid}-${++recorders}.tmp`);

  const entries: Stored[] = [];
  const pages = new Map<string, { page: HarPage; startedMs: number }>();
  let file: string | null = null;
  let dirty = false;
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

  /**
   * The file's text. Each entry is serialized once (again only if it gains its page), so a rewrite copies text
   * rather than stringifying every stream again: the proxy's clients share this event loop.
   */
  const text = (): string => {
    const skeleton: Har = {
      log: {
        version: '1.2',
        creator: { name: 'svc-emulator', version: VERSION },
        pages: [...pages.values()].sort((a, b) => a.startedMs - b.startedMs).map((p) => p.page),
        comment: `Recorded by svc-emulator proxy from ${options.upstream}; secrets left out, prompts and outputs ${keepContent ? 'kept' : 'x-ed out'}.`,
        _svcEmulator: { upstream: options.upstream, keepContent },
        entries: [],
      },
    };
    const parts = entries.map(serialized);
    const head = JSON.stringify(skeleton, null, 2);
    const at = head.lastIndexOf(EMPTY_ENTRIES);
    const list = parts.length === 0 ? EMPTY_ENTRIES : `"entries": [\n${parts.join(',\n')}\n    ]`;
    return `${head.slice(0, at)}${list}${head.slice(at + EMPTY_ENTRIES.length)}\n`;
  };

  // Linked when written: a task's page may come from an exchange that ended after others of the task.
  const serialized = (recorded: Stored): string => {
    const pageref = recorded.task && pages.has(recorded.task.id) ? recorded.task.id : null;
    if (recorded.json === null || recorded.jsonPageref !== pageref) {
      const entry = pageref === null ? recorded.entry : { pageref, ...recorded.entry };
      recorded.json = `${INDENT}${JSON.stringify(entry, null, 2).replace(/\n/g, `\n${INDENT}`)}`;
      recorded.jsonPageref = pageref;
    }
    return recorded.json;
  };

  /** Gives the recording its name the first time: a hard link fails rather than replace someone else's file. */
  const claim = async (): Promise<string> => {
    for (let n = 1; ; n++) {
      const candidate = join(options.dir, `recording-${stamp}${n === 1 ? '' : `-${n}`}.har`);
      try {
        await link(temp, candidate);
        await unlink(temp).catch(() => undefined);
        return candidate;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') continue;
        if (!NO_HARD_LINKS.has(code)) throw err;
      }
      // A filesystem without hard links: an exclusive create claims the name, the rename fills it.
      try {
        await (await open(candidate, 'wx')).close();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      await rename(temp, candidate);
      return candidate;
    }
  };

  const write = async (): Promise<void> => {
    if (!dirty) return;
    dirty = false;
    try {
      await writeFile(temp, text());
      if (file === null) file = await claim();
      else await rename(temp, file);
      lastError = null;
    } catch (err) {
      dirty = true;
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

  return {
    onExchange(ended) {
      if (closed) return;
      const recorded: Stored = { ...harEntry(ended, { keepContent }), json: null, jsonPageref: null };
      addPage(recorded);
      // In request order; exchanges end out of order (a stream outlives the polls around it).
      let at = entries.length;
      while (at > 0 && (entries[at - 1]?.startedMs ?? 0) > recorded.startedMs) at--;
      entries.splice(at, 0, recorded);
      dirty = true;
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
        if (lastError) throw lastError;
      } else await writing;
      return file === null ? [] : [file];
    },
  };
}
