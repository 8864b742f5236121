import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The seed of every property of the bad-input fuzz suite in this run (test/fuzz/bad-input/budget.ts). */
    fuzzSeed: number;
  }
}

/**
 * The globalSetup that gives the bad-input fuzz suite one seed per run. Its parts are separate files, which vitest
 * runs in separate workers; this runs once, in the main process, and hands the seed to every worker
 * (`provide` → `inject`). `FUZZ_SEED` overrides it in the parts themselves.
 */
export default function setup(project: TestProject): void {
  project.provide('fuzzSeed', Math.floor(Math.random() * 2 ** 31));
}
