import { defineConfig } from 'vitest/config';
import base, { SLOW_EXAMPLES } from './vitest.config.ts';

// `npm run test:slow`: what `npm test` leaves out for its time, run by CI as a step of its own on every run. The
// package-install tests (npm pack, a git dependency, npx in a fresh clone); the fuzz suites: about 11,000
// bad-input cases in five parts, and the schema-valid fuzzer against a started emulator; the soaks, random and long
// by design: kill -9 at seeded random moments under load, round after round (test/crash/*.soak.ts; npm test keeps
// each bug they found as a deterministic regression), and the points property over many sequences (npm test runs a
// few); and the worked example of recording (examples/recording/record-replay.sh, six processes and 3 s tasks; npm
// test runs the same three steps as the docs' recipe in docs/guides/record-and-replay.md).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/package/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts', 'test/**/*.soak.ts', ...SLOW_EXAMPLES],
    exclude: ['**/node_modules/**'],
    // One random seed per run for every part of the bad-input fuzz suite (FUZZ_SEED overrides it).
    globalSetup: ['test/fuzz/seed-setup.ts'],
  },
});
