import { defineConfig } from 'vitest/config';
import slow from './vitest.slow.config.ts';

// `npm run fuzz`: the fuzz suites alone, bad-input and schema-valid (`npm run test:slow` runs them with the package
// tests). The `include` is replaced, not merged: mergeConfig would append to it and run every other test as well.
export default defineConfig({ ...slow, test: { ...slow.test, include: ['test/fuzz/**/*.fuzz.ts'] } });
