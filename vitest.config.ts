import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { busier } from './test/support/busy.ts';

/** Example tests that run in `npm run test:slow` (see vitest.slow.config.ts), not in `npm test`. */
export const SLOW_EXAMPLES = ['examples/recording/record-replay.test.ts'];

export default defineConfig({
  resolve: {
    // The examples import the package by name, as an integrator's project does.
    alias: {
      'svc-emulator/conformance': fileURLToPath(new URL('./src/conformance/index.ts', import.meta.url)),
      'svc-emulator/proxy': fileURLToPath(new URL('./src/proxy/index.ts', import.meta.url)),
      'svc-emulator/recording': fileURLToPath(new URL('./src/recording/index.ts', import.meta.url)),
      'svc-emulator/parity': fileURLToPath(new URL('./src/parity/index.ts', import.meta.url)),
      'svc-emulator/receiver-check': fileURLToPath(new URL('./src/receiver-check/index.ts', import.meta.url)),
      'svc-emulator': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    // `npm test`: the fast suite. The long suites run with `npm run test:slow` (vitest.slow.config.ts) and as a CI
    // step of their own: the package-install tests (test/package), the fuzz suites (test/fuzz/*.fuzz.ts), the soaks
    // (*.soak.ts) and the worked example of recording.
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    exclude: ['test/package/**', ...SLOW_EXAMPLES, '**/node_modules/**'],
    environment: 'node',
    // Tests run on the manual clock and never sleep; every wait is for an event. A timeout only turns a hang into a
    // failure, so it is far above any test's time on a quiet machine (seconds): a busy one (npm run test:loaded, a
    // shared CI runner) makes tests slower, never failed. The hooks start emulators and processes: the same margin.
    // On a machine already busier than its cores when the run starts (other jobs beside it), the margin grows with
    // the load, up to five times: slower, never failed.
    testTimeout: 60_000 * busier,
    hookTimeout: 60_000 * busier,
    // Many tests wait on sockets and child processes, not the CPU: three files at a time on 2 cores (vitest's
    // default, cores - 1, runs one file at a time here).
    maxWorkers: 3,
    // Files share a worker's loaded modules (each still starts its own emulators): importing the app afresh for every
    // file was a third of the suite's CPU time. What src/ keeps at module level is caches and memos of pure work
    // (parsed documents, compiled validators, fixtures), none a test sets; a run's choices live in its context.
    isolate: false,
    reporters: ['default'],
    experimental: {
      // The sources as transformed for the test workers, kept in node_modules/ between runs (keyed by each file's
      // content, id and the configuration; no plugin here reads anything else): a run after the first transforms
      // only what changed, about 7 % less CPU time.
      fsModuleCache: true,
    },
  },
});
