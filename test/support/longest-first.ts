import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

// The order files start in. Vitest starts the files that took longest last time first, from its results cache in
// node_modules/; a fresh clone has none, so it starts the biggest files first, and a long file that happens to be
// small starts late and runs on alone at the end: a cold `npm test` spent its last 20 s on test/cli/launcher.test.ts
// with two cores mostly idle. These files took longest in a run of three at a time (seconds of wall time, on a
// quiet 2-core machine), and start first, longest first, whatever the cache says; the others follow in Vitest's
// order.
const LONGEST: readonly string[] = [
  'test/ui/dashboard.test.ts', // 50 s
  'test/readme/doc-blocks.test.ts', // 36 s
  'test/http/files.test.ts', // 26 s
  'test/cli/launcher.test.ts', // 22 s
  'test/store/damage.test.ts', // 21 s
  'test/conformance/deviations.test.ts', // 19 s
  'test/text/request-shapes.test.ts', // 14 s
  'test/cli/progress.test.ts', // 14 s
  'test/recording/import.test.ts', // 13 s
  'test/http/webhooks-hanging.test.ts', // 13 s
  'test/store/sqlite-store.test.ts', // 13 s
];

const rank = (spec: TestSpecification): number => {
  const at = LONGEST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
  return at === -1 ? LONGEST.length : at;
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: the files not listed keep Vitest's order among themselves.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
