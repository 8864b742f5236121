import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The examples import the package by name, as an integrator's project does.
    alias: {
      'svc-emulator/conformance': fileURLToPath(new URL('./src/conformance/index.ts', import.meta.url)),
      'svc-emulator/proxy': fileURLToPath(new URL('./src/proxy/index.ts', import.meta.url)),
      'svc-emulator/recording': fileURLToPath(new URL('./src/recording/index.ts', import.meta.url)),
      'svc-emulator/parity': fileURLToPath(new URL('./src/parity/index.ts', import.meta.url)),
      'svc-emulator': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    // The fuzz suites (test/fuzz: about 11,000 bad-input cases in five parts, and the schema-valid fuzzer) are
    // part of every run; `npm run fuzz` runs them alone.
    include: ['test/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts', 'examples/**/*.test.ts'],
    environment: 'node',
    // Tests run on the manual clock and never sleep; a long test is a bug, not a slow machine.
    testTimeout: 20_000,
    // Many tests wait on sockets and child processes, not the CPU: three files at a time on 2 cores (vitest's
    // default, cores - 1, runs one file at a time here).
    maxWorkers: 3,
    // Files share a worker's loaded modules (each still starts its own emulators): importing the app afresh for every
    // file was a third of the suite's CPU time. What src/ keeps at module level is caches and memos of pure work
    // (parsed documents, compiled validators, fixtures), none a test sets; a run's choices live in its context.
    isolate: false,
    // One random seed per run for every part of the bad-input fuzz suite (FUZZ_SEED overrides it).
    globalSetup: ['test/fuzz/seed-setup.ts'],
    reporters: ['default'],
  },
});
