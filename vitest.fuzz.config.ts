import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run fuzz`: the property-based bad-input suite (issue 9). Not in `npm test` yet: it still finds open bugs,
// listed in the closing note of the session that added it; it joins CI once they are fixed.
export default mergeConfig(base, defineConfig({ test: { include: ['test/fuzz/**/*.fuzz.ts'], testTimeout: 120_000 } }));
