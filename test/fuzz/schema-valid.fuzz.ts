import { afterAll, expect, it } from 'vitest';
import { ADMIN, killAll, startCli } from '../support/cli.ts';
import { describe, runSchemaFuzz } from './schema/fuzz.ts';

/**
 * Schema-valid input, fuzzed (issue 15): the positive counterpart of bad-input.fuzz.ts. A real `svc-emulator
 * start` gets requests generated from openapi/service.yaml and proven valid by Ajv (test/fuzz/schema/), and
 * must answer none of them with a server error, a refusal as invalid, an answer unlike the document or one
 * without X-Request-Id. A smaller budget than the CI step (`tsx test/fuzz/schema/run.ts`);
 * `SCHEMA_FUZZ_SEED=<seed>` replays a run, `SCHEMA_FUZZ_RUNS=<n>` changes its size.
 *
 * The clock is manual so that no task finishes during the run: callbacks would go to the generated
 * (random, public) webhook addresses.
 */
const RUNS = Number(process.env['SCHEMA_FUZZ_RUNS'] ?? 600);
const SEED = process.env['SCHEMA_FUZZ_SEED'] ? Number(process.env['SCHEMA_FUZZ_SEED']) : Math.floor(Math.random() * 2 ** 31);

afterAll(killAll);

it('answers every schema-valid request without a server error, a refusal or a deviation from the document', async () => {
  const cli = await startCli(['--memory', '--clock', 'manual']);
  const report = await runSchemaFuzz({ baseUrl: cli.base, adminToken: ADMIN, runs: RUNS, seed: SEED });
  const lines = describe(report);
  console.log(lines.at(-1));
  expect(report.starved, lines.join('\n')).toEqual([]);
  expect(report.findings.map((f) => `${f.kind}: ${f.operation} → ${f.status} ${f.code ?? ''} (${f.gist})`), lines.join('\n')).toEqual([]);
}, 180_000);
