import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run test:slow`: what `npm test` leaves out for its time, run by CI as a step of its own on every run. The
// package-install tests (npm pack, a git dependency, npx in a fresh clone) and the fuzz suites: about 11,000
// bad-input cases in five parts, and the schema-valid fuzzer against a started emulator.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/package/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts'],
    exclude: ['**/node_modules/**'],
    // One random seed per run for every part of the bad-input fuzz suite (FUZZ_SEED overrides it).
    globalSetup: ['test/fuzz/seed-setup.ts'],
  },
});
