/**
 * Issue 28's done-when: with no fault rule loaded, the request path costs no more than before. Three emulators run
 * side by side from the same sources, each in its own process: (a) as shipped, with no rule; (b) without the
 * feature: app.ts's internal SVC_EMULATOR_BENCH_WITHOUT_FAULTS=1 leaves the fault step and the client-log feed out
 * of the /v1 path, as it was before faults and the verdict; (c) as shipped with one rule loaded that never matches
 * (the rules are asked, none takes the request), for information. Each takes the same fixed number of
 * GET /v1/tasks/{id} per round, in rounds whose order rotates, so that a busy second of the machine falls on each
 * in turn. Two figures per run: answers per second of wall time (what the done-when names), and answers per second
 * of the server's own CPU time (the request path's cost, which other work on the machine moves less: on a shared 2-core
 * machine the wall-time rate of one server scatters by tens of percent from round to round). The verdict is
 * the median over rounds of (a)'s answers per CPU second over (b)'s in the same round.
 */
import { loadavg } from 'node:os';
import { ratioOf, rotatingRounds, variantFigures } from './rounds.ts';
import type { Measured, Ratio, Round, VariantFigures } from './rounds.ts';
import { ADMIN, benchKey, emulatorCommand, json, startServer, stopServer } from './servers.ts';

export const ROUNDS = Number(process.env['BENCH_FAULT_ROUNDS'] ?? 20);
export const REQUESTS = Number(process.env['BENCH_FAULT_REQUESTS'] ?? 2_500);
/** (a) passes unless its answers per CPU second are more than this share below (b)'s: the noise of that figure. */
export const NOISE_MARGIN = 0.05;
const WARMUP_REQUESTS = 3_000;

const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });
/** Asked on every request (method and path match), never taken: no key is this one. */
const NEVER_MATCHES = { rules: [{ match: { method: 'GET', path: '/v1/tasks*', key: 'sk-bench-no-such-key' }, fault: { kind: 'error', code: 'service_unavailable' } }] };

export interface FaultCostFigures {
  /** The machine's 1-minute load average when the section began and ended: other work moves every figure. */
  loadAverage: { before: number; after: number };
  rounds: number;
  requests: number;
  shipped: VariantFigures;
  without: VariantFigures;
  neverMatching: VariantFigures;
  /** (a) / (b) and (c) / (b), round by round. */
  shippedRatio: { rps: Ratio; cpuRps: Ratio };
  neverMatchingRatio: { rps: Ratio; cpuRps: Ratio };
}

interface Variant {
  label: string;
  env?: Record<string, string>;
  rules?: unknown;
}

const VARIANTS: Variant[] = [
  { label: 'as shipped, no rule loaded' },
  { label: 'without the feature (no fault step, no client log)', env: { SVC_EMULATOR_BENCH_WITHOUT_FAULTS: '1' } },
  { label: 'as shipped, one rule that never matches', rules: NEVER_MATCHES },
];

async function prepare(variant: Variant): Promise<Measured> {
  const server = await startServer(emulatorCommand(['--memory']), '/_emulator/health', variant.env ? { env: variant.env } : {});
  const key = await benchKey(server.base);
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const task = await json(`${server.base}/v1/tasks`, { method: 'POST', headers, body: SUBMIT });
  if (variant.rules) {
    const admin = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
    await json(`${server.base}/_emulator/faults`, { method: 'POST', headers: admin, body: JSON.stringify(variant.rules) });
  }
  return { server, url: `${server.base}/v1/tasks/${String(task['id'])}`, headers };
}

export async function faultCost(): Promise<FaultCostFigures> {
  const before = loadavg()[0] ?? NaN;
  const targets: Measured[] = [];
  try {
    for (const variant of VARIANTS) targets.push(await prepare(variant));
    const rounds = await rotatingRounds(targets, ROUNDS, REQUESTS, WARMUP_REQUESTS);
    const variant = (i: number): VariantFigures => variantFigures(VARIANTS[i]?.label ?? '', rounds[i] ?? []);
    const ratio = (i: number, figure: keyof Round): Ratio => ratioOf(rounds[i] ?? [], rounds[1] ?? [], figure);
    return {
      loadAverage: { before, after: loadavg()[0] ?? NaN },
      rounds: ROUNDS,
      requests: REQUESTS,
      shipped: variant(0),
      without: variant(1),
      neverMatching: variant(2),
      shippedRatio: { rps: ratio(0, 'rps'), cpuRps: ratio(0, 'cpuRps') },
      neverMatchingRatio: { rps: ratio(2, 'rps'), cpuRps: ratio(2, 'cpuRps') },
    };
  } finally {
    for (const t of targets) await stopServer(t.server);
  }
}

export function printFaultCost(f: FaultCostFigures, line: (text: string) => void): void {
  const rps = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(7);
  const pct = (r: number): string => `${(r * 100).toFixed(1)}%`;
  const spread = (r: Ratio): string => `${pct(r.median)} (middle half of rounds ${pct(r.q1)} to ${pct(r.q3)})`;
  line(
    `faults: GET /v1/tasks/{id}, ${f.rounds} rounds of ${f.requests.toLocaleString('en-US')} requests, the three in rotating order ` +
      `(load average ${f.loadAverage.before.toFixed(1)} before, ${f.loadAverage.after.toFixed(1)} after); medians of the rounds`,
  );
  line(`  ${''.padEnd(52)}   req/s   req per server CPU second`);
  for (const v of [f.shipped, f.without, f.neverMatching]) line(`  ${v.label.padEnd(52)} ${rps(v.rps)}   ${rps(v.cpuRps)}`);
  line(`  as shipped / without the feature:       req/s ${spread(f.shippedRatio.rps)}; per CPU second ${spread(f.shippedRatio.cpuRps)}`);
  line(`  one rule never matching / without:      req/s ${spread(f.neverMatchingRatio.rps)}; per CPU second ${spread(f.neverMatchingRatio.cpuRps)}`);
  const { median: judged, q1, q3 } = f.shippedRatio.cpuRps;
  // Rounds that scatter wider than the margin say the machine was busy with other work: the verdict is then noise.
  const scattered = q3 - q1 > 2 * NOISE_MARGIN ? `; but the rounds' middle half spans ${pct(q1)} to ${pct(q3)}, wider than the margin: rerun on a quiet machine to trust it` : '';
  line(
    `  ${judged >= 1 - NOISE_MARGIN ? 'PASS' : 'FAIL'}: with no rule loaded the server answers ${pct(judged)} of the requests per CPU second it answers ` +
      `without the feature (noise margin ${pct(NOISE_MARGIN)}: passes at ${pct(1 - NOISE_MARGIN)} or more)${scattered}`,
  );
}
