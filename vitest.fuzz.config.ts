import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run fuzz`: the property-based bad-input suite alone (it also runs as part of `npm test`). The base
// config's `include` is replaced, not merged: mergeConfig would append to it and run every other test as well.
export default defineConfig({ ...base, test: { ...base.test, include: ['test/fuzz/**/*.fuzz.ts'] } });
