import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run fuzz`: the property-based bad-input suite alone. The base config's `include` is replaced, not merged:
// mergeConfig would append to it and run every other test as well.
export default defineConfig({ ...base, test: { ...base.test, include: ['test/fuzz/**/*.fuzz.ts'], testTimeout: 120_000 } });
