import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The examples import the package by name, as an integrator's project does.
    alias: {
      'svc-emulator/conformance': fileURLToPath(new URL('./src/conformance/index.ts', import.meta.url)),
      'svc-emulator': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    // The fuzz suite (test/fuzz, about 11,000 cases) is part of every run; `npm run fuzz` runs it alone.
    include: ['test/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts', 'examples/**/*.test.ts'],
    environment: 'node',
    // Tests run on the manual clock and never sleep; a long test is a bug, not a slow machine.
    testTimeout: 20_000,
    reporters: ['default'],
  },
});
