import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Har, HarEntry, HarPage } from './har.ts';

/** A recording as one list: every `.har` file of a directory (by name), or one file, entries in time order. */
export interface Recording {
  files: string[];
  pages: HarPage[];
  entries: HarEntry[];
}

/** Thrown for a path that holds no recording, or a file that is not HAR 1.2: the message names the file. */
export class RecordingError extends Error {}

export function readRecording(path: string): Recording {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path).filter((name) => name.endsWith('.har')).sort().map((name) => join(path, name))
      : [path];
  } catch {
    throw new RecordingError(`${path}: no such file or directory`);
  }
  if (files.length === 0) throw new RecordingError(`${path}: no .har files in it`);
  const pages: HarPage[] = [];
  const entries: HarEntry[] = [];
  for (const file of files) {
    let har: Har;
    try {
      har = JSON.parse(readFileSync(file, 'utf8')) as Har;
    } catch (err) {
      throw new RecordingError(`${file}: not JSON (${(err as Error).message})`);
    }
    if (har?.log?.version !== '1.2' || !Array.isArray(har.log.entries)) throw new RecordingError(`${file}: not a HAR 1.2 log (log.version and log.entries)`);
    pages.push(...(har.log.pages ?? []));
    entries.push(...har.log.entries);
  }
  // Stable: entries of one instant keep their order within their file.
  entries.sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));
  return { files, pages, entries };
}
