import { accessSync, constants, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError } from './args.ts';

/**
 * A file a command writes when it ends (a JUnit or JSON report): the flag that named it, the path given (null or
 * undefined: not asked for), and its text, made when it is written.
 */
export interface Report {
  flag: string;
  path: string | null | undefined;
  text: () => string;
}

/**
 * Readies the files a command writes at its end, before it runs anything (issue 36, item 9: a report into a folder
 * that did not exist was written nowhere, with a stack trace, after the whole run). The folder of each is made, each
 * missing level of it, and must be writable; the path itself must not be a folder. Nothing is created for the file
 * itself, so a run that fails to start leaves nothing behind but the folders. A path that cannot be written is a
 * usage error: one line naming the flag and why, exit 2.
 */
export function prepareReports(command: string, reports: readonly Pick<Report, 'flag' | 'path'>[]): void {
  for (const { flag, path } of reports) {
    if (!path) continue;
    try {
      if (existsSync(path) && statSync(path).isDirectory()) throw new Error('a folder, not a file');
      const folder = dirname(path);
      makeFolder(folder);
      accessSync(existsSync(path) ? path : folder, constants.W_OK);
    } catch (err) {
      throw cannotWrite(command, flag, path, err);
    }
  }
}

/** A report that could not be written at the end; `written` holds the paths of the others, which were. */
export class UnwrittenReport extends UsageError {
  constructor(
    message: string,
    readonly written: string[],
  ) {
    super(message);
  }
}

/**
 * Writes each report asked for, the others still when one fails (a run's results are not lost to a full disk or a
 * folder removed during the run); returns the paths written. A write that failed is an `UnwrittenReport`, a usage
 * error of one line naming the first that failed, thrown once all were tried.
 */
export function writeReports(command: string, reports: readonly Report[]): string[] {
  const written: string[] = [];
  let failed: string | null = null;
  for (const { flag, path, text } of reports) {
    if (!path) continue;
    try {
      writeFileSync(path, text());
      written.push(path);
    } catch (err) {
      failed ??= cannotWrite(command, flag, path, err).message;
    }
  }
  if (failed !== null) throw new UnwrittenReport(failed, written);
  return written;
}

/**
 * Readies a folder a command writes files into (import-recording's --out) as `prepareReports` readies a report's:
 * made, each missing level, and writable; a file there is a usage error.
 */
export function prepareFolder(command: string, flag: string, folder: string): void {
  try {
    makeFolder(folder);
    accessSync(folder, constants.W_OK);
  } catch (err) {
    throw cannotWrite(command, flag, folder, err);
  }
}

/**
 * Makes `folder` one level at a time: node's recursive mkdir never returns under /proc (it retries ENOENT there
 * for ever), and a level at a time can say which part of the path is a file.
 */
function makeFolder(folder: string): void {
  const missing: string[] = [];
  let at = folder;
  while (!existsSync(at)) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  if (!statSync(at).isDirectory()) throw new Error(`${at} is a file, not a folder`);
  for (const level of missing) mkdirSync(level);
}

/** `svc-emulator conformance: --junit out/x.xml: cannot write there (out is a file, not a folder)`. */
function cannotWrite(command: string, flag: string, path: string, err: unknown): UsageError {
  const why = ((err as Error).message || String(err)).replace(/\s*\n\s*/g, ' ');
  return new UsageError(`svc-emulator ${command}: ${flag} ${path}: cannot write there (${why})`);
}
