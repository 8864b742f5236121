import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 may grow the old generation beyond what a full collection left, for the `start` process only.
 *
 * The emulator keeps little alive (some 25 MB of heap after a collection under load), but it allocates fast, and
 * V8's default factor then grows towards 4× the live set: 8 s of GET and POST load left 90–130 MB of heap behind,
 * most of it garbage (`BENCH_ONLY=compare npm run bench`, issue 42). 1.5× keeps that near 50 MB; the extra full
 * collections are incremental and concurrent, and cost under 1 % of a request's main-thread time.
 */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/**
 * The flag to apply, or null where the process was given its own value (on the command line or in
 * `NODE_OPTIONS`), which wins. Only `start` applies it: an embedding application (`createEmulator`) keeps its
 * process's settings.
 */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string): string | null {
  const given = (arg: string): boolean => arg.startsWith(FLAG) || arg.startsWith('--heap_growing_percent');
  if (execArgv.some(given) || nodeOptions.split(/\s+/).some(given)) return null;
  return `${FLAG}=${HEAP_GROWING_PERCENT}`;
}

export function limitHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv, process.env['NODE_OPTIONS'] ?? '');
  if (flag) setFlagsFromString(flag);
}
