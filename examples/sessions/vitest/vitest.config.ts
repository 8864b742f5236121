import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One emulator for the whole run (global-setup.ts starts it in-process and listens), one session per test file:
// every worker of the pool makes its own, so files run in parallel without seeing each other's tasks or clocks.
export default defineConfig({
  // In your project `svc-emulator` is the installed package; here the name maps to this repository's sources.
  resolve: { alias: { 'svc-emulator': fileURLToPath(new URL('../../../src/index.ts', import.meta.url)) } },
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['*.spec.ts'],
    globalSetup: ['./global-setup.ts'],
    maxWorkers: 4,
  },
});
