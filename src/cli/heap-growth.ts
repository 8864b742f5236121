import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * How far V8 may grow the heap of the `start` process (issue 42: RSS after 8 s of GET and POST load).
 *
 * The emulator keeps little alive (some 25 MB of heap after a full collection under load) but allocates fast, and
 * V8's defaults size the heap for that rate: the old generation grows towards 4× what a collection left, and the
 * young one doubles to 32 MB. 8 s of load left 90–130 MB of heap, most of it garbage, and 200–230 MiB of RSS. Both
 * bounds below cost nothing measurable: main-thread GC time over the same load stayed within its run-to-run
 * spread (`PerformanceObserver` 'gc' entries, 4 s GET then 4 s POST, alternated runs).
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * The young generation stops growing at the size start-up left it, if that is at least this (V8's start-up
 * allocations leave it at 16 MB; a smaller one would mean a scavenge every few hundred requests).
 */
export const YOUNG_KEPT_FROM_BYTES = 8 * 1024 * 1024;

export interface HeapFacts {
  execArgv: readonly string[];
  nodeOptions: string;
  /** The young generation's size now (both semi-spaces). */
  youngBytes: number;
}

/**
 * The flags to set, each left out where the process was given its own value (on the command line or in
 * `NODE_OPTIONS`), which wins. Only `start` sets them: an embedding application (`createEmulator`) keeps its
 * process's settings.
 */
export function heapFlags(facts: HeapFacts): string[] {
  const args = [...facts.execArgv, ...facts.nodeOptions.split(/\s+/)].map((arg) => arg.replaceAll('_', '-'));
  const given = (...names: string[]): boolean => args.some((arg) => names.some((name) => arg === name || arg.startsWith(`${name}=`)));
  const flags: string[] = [];
  if (!given('--heap-growing-percent')) flags.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (!given('--semi-space-growth-factor', '--max-semi-space-size', '--min-semi-space-size') && facts.youngBytes >= YOUNG_KEPT_FROM_BYTES) {
    flags.push('--semi-space-growth-factor=1');
  }
  return flags;
}

export function boundHeap(): void {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
  for (const flag of heapFlags({ execArgv: process.execArgv, nodeOptions: process.env['NODE_OPTIONS'] ?? '', youngBytes: young })) {
    setFlagsFromString(flag);
  }
}
