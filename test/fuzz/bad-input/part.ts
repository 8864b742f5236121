import { existsSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import type { Response } from 'supertest';
import { afterAll, expect, it } from 'vitest';
import { PLANNED, RUNS, SEED, TIMEOUT, scaled } from './budget.ts';
import type { Part } from './budget.ts';
import { exchange } from './exchange.ts';
import type { Case, World } from './exchange.ts';

export interface FuzzPart<P extends Part> {
  /** This part's property runs (before FUZZ_SCALE). */
  runs: (typeof RUNS)[P];
  /** A fuzz test: however it fails (a counterexample, or a setup that broke), that is one failed case. */
  fuzz: (name: string, body: () => Promise<void>) => void;
  /** fc.assert that counts: the runs go to the tally, and a failure throws fast-check's report (seed, path, counterexample). */
  check: <T>(property: fc.IAsyncProperty<T>, parameters: fc.Parameters<T>) => Promise<void>;
  /** A one-off case outside the properties, counted like a property run. */
  once: (w: World, c: Case) => Promise<Response>;
  /**
   * Last in the file: a test that the part ran its planned cases; after it, the line
   * `fuzz(<part>): <cases> cases, <failed> failed (seed <seed>)`, also written to test-results/fuzz-<part>.json
   * when that directory exists (CI creates it, and sums the parts from there).
   */
  count: () => void;
}

const RESULTS_DIR = new URL('../../../test-results/', import.meta.url);

/** One part of the suite: its budget and its own tally, whatever else the worker that runs it has loaded. */
export function fuzzPart<P extends Part>(name: P): FuzzPart<P> {
  const runs = RUNS[name];
  /** Cases run (property runs and one-off cases) and failed (a property's counterexample, or any other failure of a test). */
  const tally = { cases: 0, failed: 0 };
  return {
    runs,
    fuzz(title, body) {
      it(
        title,
        async () => {
          try {
            await body();
          } catch (err) {
            tally.failed += 1;
            throw err;
          }
        },
        TIMEOUT,
      );
    },
    async check(property, parameters) {
      const details = await fc.check(property, parameters);
      tally.cases += details.numRuns;
      if (details.failed) throw new Error(fc.defaultReportMessage(details), { cause: details.errorInstance });
    },
    once(w, c) {
      tally.cases += 1;
      return exchange(w, c);
    },
    count() {
      const budget: number[] = Object.values(runs);
      const planned = budget.reduce((a, b) => a + b, 0);
      const scaledPlanned = budget.reduce((a, b) => a + scaled(b), 0);
      it(`ran its ${scaledPlanned} planned cases (all parts plan ${PLANNED}, at least 10,000)`, () => {
        expect(PLANNED).toBeGreaterThanOrEqual(10_000);
        expect(tally.cases).toBeGreaterThanOrEqual(scaledPlanned);
      });
      afterAll(() => {
        const summary = { cases: tally.cases, failed: tally.failed, seed: SEED, planned };
        console.log(`fuzz(${name}): ${summary.cases} cases, ${summary.failed} failed (seed ${SEED})`);
        if (existsSync(RESULTS_DIR)) writeFileSync(new URL(`fuzz-${name}.json`, RESULTS_DIR), `${JSON.stringify(summary)}\n`);
      });
    },
  };
}
