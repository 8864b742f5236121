import { statSync } from 'node:fs';
import { machineNow } from '../clock/index.ts';

/**
 * Start-up work that can take long says so: a line when it begins (what, which file, how big) and one when it
 * ends (how long it took), at info. Only work that can take long: files of LONG_FILE_BYTES or more (a store opened
 * and checked, a journal store or a state document read and imported, a store checked in the background) and
 * LONG_TASK_COUNT or more unfinished tasks to schedule; each of those takes about a second or more on a laptop.
 * A small or in-memory store starts as quietly as before.
 */
export const LONG_FILE_BYTES = 32 * 1024 * 1024;
export const LONG_TASK_COUNT = 20_000;

export type Step = <T>(what: string, detail: string | null, long: boolean, work: () => T) => T;

/** Runs start-up steps, announcing the long ones through `info` (none without it: an in-process emulator). */
export function startupSteps(info: ((message: string) => void) | null, now: () => number = machineNow): Step {
  return (what, detail, long, work) => {
    if (!long || !info) return work();
    info(detail ? `${what} (${detail})` : what);
    const started = now();
    const done = (): void => info(`${what}: done in ${seconds(now() - started)}`);
    const result = work();
    if (result instanceof Promise) {
      // Said only when it worked: a failure stops the start with its own line.
      return result.then((value: unknown) => {
        done();
        return value;
      }) as typeof result;
    }
    done();
    return result;
  };
}

/** `240 MB`, `1.3 GB`. */
export const sizeText = (bytes: number): string =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GB` : `${Math.max(1, Math.round(bytes / 1024 ** 2))} MB`;

/** A file's size, 0 when there is none. */
export function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** `0.4 s`, `17.2 s`. */
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
