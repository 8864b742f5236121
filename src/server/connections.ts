import { readFileSync } from 'node:fs';

/**
 * The default connection cap. Every connection holds a file descriptor; once the process runs out of them, new
 * clients are reset by the operating system with nothing logged (libuv accepts and drops them). So the cap sits
 * below the process's open-file limit, keeping a reserve for what else needs descriptors.
 */
export interface ConnectionBudget {
  /** The soft limit on open files (RLIMIT_NOFILE, `ulimit -n`); null where it cannot be read. */
  openFiles: number | null;
  /** Descriptors kept from connections: the store, its lock and workers, files, logs, callback sends. */
  reserve: number;
  /** Connections at most, unless told otherwise. */
  cap: number;
}

/** The store, its lock and WAL, the checkpoint and check workers, files served or uploaded, stdio and logs. */
const FIXED_RESERVE = 64;
/** Where the open-file limit is unknown (not Linux): the cap macOS's raised limit (10240) and Windows both take. */
export const FALLBACK_CAP = 4096;

/**
 * The soft RLIMIT_NOFILE of this process, as Linux states it in /proc/self/limits (node raises the soft limit
 * to the hard one at start, so this is the limit in force, not the shell's); null elsewhere or if unlimited.
 */
export function openFileLimit(limits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | null {
  let text: string;
  try {
    text = limits();
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  const n = Number(soft);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/**
 * The default cap for a process with `openFiles` descriptors whose callback sends take up to `callbackSends` of
 * them: the limit less the reserve, but never under half the limit (a small limit is shared rather than left
 * with no room for connections).
 */
export function connectionBudget(openFiles: number | null, callbackSends: number): ConnectionBudget {
  if (openFiles === null) return { openFiles, reserve: 0, cap: FALLBACK_CAP };
  const cap = Math.max(openFiles - FIXED_RESERVE - callbackSends, Math.floor(openFiles / 2), 1);
  return { openFiles, reserve: openFiles - cap, cap };
}

/** How the budget reads in help and logs: `ulimit -n 20000, less 320 kept for the store, files and callbacks`. */
export const budgetText = (budget: ConnectionBudget): string =>
  budget.openFiles === null
    ? 'the open-file limit is unknown here'
    : `ulimit -n ${budget.openFiles}, less ${budget.reserve} kept for the store, files and callbacks`;
