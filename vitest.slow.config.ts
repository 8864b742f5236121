import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run test:slow`: what `npm test` leaves out for its time, run by CI as a step of its own on every run. The
// package-install tests (npm pack, a git dependency, npx in a fresh clone); the fuzz suites: about 11,000
// bad-input cases in five parts, and the schema-valid fuzzer against a started emulator; and the soaks, random and
// long by design: kill -9 under load, round after round (test/crash/kill9.soak.ts; npm test keeps the dirty-read
// kills and the deterministic crash regressions), and the points property over many sequences (npm test runs a few).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/package/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts', 'test/**/*.soak.ts'],
    exclude: ['**/node_modules/**'],
    // One random seed per run for every part of the bad-input fuzz suite (FUZZ_SEED overrides it).
    globalSetup: ['test/fuzz/seed-setup.ts'],
  },
});
