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
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { CONNECTIONS } from './load.ts';
import { ADMIN, benchKey, emulatorCommand, json, startServer, stopServer } from './servers.ts';
import type { Server } from './servers.ts';

export const ROUNDS = Number(process.env['BENCH_FAULT_ROUNDS'] ?? 20);
export const REQUESTS = Number(process.env['BENCH_FAULT_REQUESTS'] ?? 2_500);
/** (a) passes unless its answers per CPU second are more than this share below (b)'s: the noise of that figure. */
export const NOISE_MARGIN = 0.05;
const WARMUP_REQUESTS = 3_000;

const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });
/** Asked on every request (method and path match), never taken: no key is this one. */
const NEVER_MATCHES = { rules: [{ match: { method: 'GET', path: '/v1/tasks*', key: 'sk-bench-no-such-key' }, fault: { kind: 'error', code: 'service_unavailable' } }] };

/** One round of one variant: answers per second of wall time, and per second of the server's own CPU time. */
export interface Round {
  rps: number;
  cpuRps: number;
}

export interface VariantFigures {
  label: string;
  rounds: Round[];
  /** Medians over the rounds. */
  rps: number;
  cpuRps: number;
}

/** Median, first and third quartile over the rounds of one variant's figure divided by the same round's without the feature. */
export interface Ratio {
  median: number;
  q1: number;
  q3: number;
}

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

/** The value at `q` (0 to 1) of `values`, linearly between neighbours. */
export const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = sorted[Math.floor(at)] ?? NaN;
  const high = sorted[Math.ceil(at)] ?? NaN;
  return low + (high - low) * (at - Math.floor(at));
};
export const median = (values: number[]): number => quantile(values, 0.5);

interface Target {
  server: Server;
  url: string;
  headers: Record<string, string>;
}

/**
 * The server's CPU time so far (user and system, every thread), in seconds, from /proc: what one request costs
 * the server moves less than the answers per wall second when other work shares the machine. NaN where there
 * is no /proc.
 */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, the 14th and 15th fields of the line (the 12th and 13th after the command's name).
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100;

/**
 * `amount` requests: 2xx answers per second of wall time, timed from the start of the run to its last answer
 * (autocannon notices that the amount is reached only on its once-a-second sample, so its own duration is in
 * whole seconds, far too coarse for a run of a few seconds), and per second of the server's CPU time. Any other
 * answer fails the bench.
 */
function rate(t: Target, amount: number): Promise<Round> {
  return new Promise((resolve, reject) => {
    const cpuBefore = cpuSeconds(t.server.child.pid);
    const started = performance.now();
    let last = started;
    const run = autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, amount }, (err: unknown, result) => {
      if (err) return reject(err instanceof Error ? err : new Error(String(err)));
      const failed = result.errors + result.non2xx;
      if (failed > 0) return reject(new Error(`GET ${t.url}: ${failed} failed requests of ${result.requests.total}`));
      const ok = result['2xx'];
      resolve({ rps: ok / ((last - started) / 1000), cpuRps: ok / (cpuSeconds(t.server.child.pid) - cpuBefore) });
    });
    run.on('response', () => {
      last = performance.now();
    });
  });
}

async function prepare(variant: Variant): Promise<Target> {
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
  const targets: Target[] = [];
  try {
    for (const variant of VARIANTS) targets.push(await prepare(variant));
    for (const t of targets) await rate(t, WARMUP_REQUESTS);
    const rounds: Round[][] = VARIANTS.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < targets.length; i++) {
        const which = (round + i) % targets.length;
        const t = targets[which];
        if (t) rounds[which]?.push(await rate(t, REQUESTS));
      }
    }
    const variant = (i: number): VariantFigures => {
      const own = rounds[i] ?? [];
      return { label: VARIANTS[i]?.label ?? '', rounds: own, rps: median(own.map((r) => r.rps)), cpuRps: median(own.map((r) => r.cpuRps)) };
    };
    const ratio = (i: number, figure: keyof Round): Ratio => {
      const ratios = (rounds[i] ?? []).map((r, round) => r[figure] / (rounds[1]?.[round]?.[figure] ?? NaN));
      return { median: median(ratios), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75) };
    };
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
