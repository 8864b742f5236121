import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describe, runSchemaFuzz } from './fuzz.ts';

/**
 * `tsx test/fuzz/schema/run.ts --base-url URL [--admin-token T] [--runs N] [--seed S] [--json FILE]`: fuzzes an
 * emulator that is already running with schema-valid requests (fuzz.ts). Prints each finding with a curl line,
 * then `schema fuzz: <cases> cases, <findings> findings (seed <seed>)`; exits 1 on findings (or when an
 * operation got no valid request), 2 when it cannot run.
 */
/** Sized so a run takes well under a minute against a local emulator. */
const DEFAULT_RUNS = 4000;

const USAGE = `Usage: tsx test/fuzz/schema/run.ts --base-url URL [--admin-token T] [--key K] [--runs N] [--seed S] [--json FILE] [--document FILE]

  --base-url URL      the running emulator (http://127.0.0.1:4010)
  --admin-token T     control API token: a funded account and key are created (SVC_EMULATOR_ADMIN_TOKEN)
  --key K             without an admin token, the API key to use (default the demo key)
  --runs N            schema-valid requests to send in all (SCHEMA_FUZZ_RUNS, default ${DEFAULT_RUNS})
  --seed S            replay a run (SCHEMA_FUZZ_SEED, default random)
  --json FILE         also write the report as JSON
  --document FILE     the OpenAPI document (default openapi/service.yaml)`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        'base-url': { type: 'string' },
        'admin-token': { type: 'string' },
        key: { type: 'string' },
        runs: { type: 'string' },
        seed: { type: 'string' },
        json: { type: 'string' },
        document: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const baseUrl = values['base-url'];
  const runs = Number(values.runs ?? process.env['SCHEMA_FUZZ_RUNS'] ?? DEFAULT_RUNS);
  const seedText = values.seed ?? process.env['SCHEMA_FUZZ_SEED'];
  const seed = seedText === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(seedText);
  if (!baseUrl || !Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
    console.error(USAGE);
    return 2;
  }
  const adminToken = values['admin-token'] ?? process.env['SVC_EMULATOR_ADMIN_TOKEN'];
  console.log(`schema fuzz: ${runs} cases against ${baseUrl} (seed ${seed}; replay with SCHEMA_FUZZ_SEED=${seed})`);
  const report = await runSchemaFuzz({
    baseUrl,
    runs,
    seed,
    ...(adminToken ? { adminToken } : { key: values.key ?? 'sk-emulator-demo' }),
    ...(values.document ? { document: values.document } : {}),
    log: (line) => console.log(line),
  });
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  for (const line of describe(report)) console.log(line);
  return report.findings.length > 0 || report.starved.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(2);
  },
);
