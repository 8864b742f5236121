import type fc from 'fast-check';
import { inject } from 'vitest';

/**
 * Bad input, fuzzed (issue 9, part 1): every /v1 endpoint and every /_emulator endpoint gets bodies generated
 * from the OpenAPI schemas and then mutated (fields replaced, deleted or added with random JSON, wrong types,
 * out-of-range numbers, huge strings, deep nesting), plus hand-made nasties: invalid UTF-8, 10,000-level
 * nesting, bodies at the 1 MB limit and just over, `__proto__` / `constructor` / `prototype` keys, wrong content
 * types and charsets, duplicate keys, headers at their limits, path traversal in file addresses and path
 * parameters, malformed percent-encodings and case variants of paths. Every answer is checked (exchange.ts);
 * some properties also predict the exact answer (415/400 for content types, 413 for sizes, 401 for missing
 * tokens, the signing refusals, 422 for traversal in file addresses). Crash-class inputs (those that kill the
 * process) run against a child process with a small heap.
 *
 * The suite is cut into parts, test/fuzz/bad-input-<part>.fuzz.ts, only so that vitest runs them on different
 * workers (a file takes one worker); the parts are balanced by running time, not by count. This folder holds what
 * they share; this file, the budget and the seed.
 *
 * Failures are reproducible: one seed drives every property of every part of a run (each part prints it with its
 * count, and fast-check with the path of a failure); `FUZZ_SEED=<seed>` replays the run,
 * `FUZZ_SEED=<seed> FUZZ_PATH=<path>` one failure (run the part it came from, or all of them).
 *
 * Part of `npm run test:slow` (a CI step of its own); `npm run fuzz` runs the fuzz suites alone. Each part ends with a test that it ran
 * its planned cases and one plain line, `fuzz(<part>): <cases> cases, <failed> failed (seed <seed>)`, written
 * also to test-results/fuzz-<part>.json when that directory exists (CI creates it, and sums the parts from it).
 */

/** Property runs, per part and property. */
export const RUNS = {
  tasks: { submit: 1200, tasksRead: 800 },
  text: { chat: 1000, responses: 650, messages: 650 },
  bodies: { contentTypes: 450, malformed: 550, deep: 220, sizes: 100, protoKeys: 500 },
  'files-paths': { files: 800, models: 500, bodylessBodies: 300, paths: 800, signing: 450 },
  admin: { adminReads: 550, adminWrites: 900, adminAuth: 300, clockSpeed: 150, crashes: 120, reset: 20 },
} as const;
export type Part = keyof typeof RUNS;

/** Property runs of every part together. */
export const PLANNED = Object.values(RUNS)
  .flatMap((part) => Object.values(part))
  .reduce((a, b) => a + b, 0);

/** `FUZZ_SCALE=5 npm run fuzz` runs five times as many cases of every property, for a deeper search by hand. */
const SCALE = Number(process.env['FUZZ_SCALE'] ?? 1);
export const TIMEOUT = 120_000 * Math.max(1, SCALE);
/** The runs a property makes of its budget, FUZZ_SCALE applied. */
export const scaled = (numRuns: number): number => Math.max(1, Math.round(numRuns * SCALE));

/**
 * One seed for every property of every part of a run, so a run is replayed as a whole from the seed it prints:
 * `FUZZ_SEED` when given, else the run's seed, drawn once for all workers by test/fuzz/seed-setup.ts (the
 * configs' globalSetup), else, when that setup is missing, one of this part's own.
 */
export const SEED = runSeed();

function runSeed(): number {
  if (process.env['FUZZ_SEED']) return Number(process.env['FUZZ_SEED']);
  const provided: number | undefined = inject('fuzzSeed');
  if (provided !== undefined) return provided;
  const own = Math.floor(Math.random() * 2 ** 31);
  console.warn(`bad-input fuzz: no run seed (test/fuzz/seed-setup.ts is not in the config's globalSetup); this part drew its own, ${own}`);
  return own;
}

export const params = <T>(numRuns: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> => ({
  numRuns: scaled(numRuns),
  seed: SEED,
  ...(process.env['FUZZ_PATH'] ? { path: process.env['FUZZ_PATH'] } : {}),
  ...extra,
});
