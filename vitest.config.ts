import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Tests run on the manual clock and never sleep; a long test is a bug, not a slow machine.
    testTimeout: 20_000,
    reporters: ['default'],
  },
});
