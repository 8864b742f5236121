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
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    environment: 'node',
    // Tests run on the manual clock and never sleep; a long test is a bug, not a slow machine.
    testTimeout: 20_000,
    reporters: ['default'],
  },
});
