/**
 * Comparing emulators side by side on a busy machine (bench/faults-cost.ts, bench/text-matching.ts): each takes
 * the same fixed number of requests per round, in rounds whose order rotates, so that a busy second of the machine
 * falls on each in turn; each round yields answers per second of wall time and per second of the server's own CPU
 * time (which other work on the machine moves less), and a variant is judged round by round against another.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { CONNECTIONS } from './load.ts';
import type { Server } from './servers.ts';

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

/** Median, first and third quartile over the rounds of one variant's figure divided by the same round's of another. */
export interface Ratio {
  median: number;
  q1: number;
  q3: number;
}

/** The value at `q` (0 to 1) of `values`, linearly between neighbours. */
export const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = sorted[Math.floor(at)] ?? NaN;
  const high = sorted[Math.ceil(at)] ?? NaN;
  return low + (high - low) * (at - Math.floor(at));
};
export const median = (values: number[]): number => quantile(values, 0.5);

const CLOCK_TICKS = 100;

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

/** The request a variant is measured with, sent `amount` times. */
export interface Measured {
  server: Server;
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/**
 * `amount` requests: 2xx answers per second of wall time, timed from the start of the run to its last answer
 * (autocannon notices that the amount is reached only on its once-a-second sample, so its own duration is in
 * whole seconds, far too coarse for a run of a few seconds), and per second of the server's CPU time. Any other
 * answer fails the bench.
 */
export function rate(t: Measured, amount: number): Promise<Round> {
  return new Promise((resolve, reject) => {
    const cpuBefore = cpuSeconds(t.server.child.pid);
    const started = performance.now();
    let last = started;
    const options = { url: t.url, method: t.method ?? 'GET', headers: t.headers, ...(t.body !== undefined ? { body: t.body } : {}), connections: CONNECTIONS, amount };
    const run = autocannon(options, (err: unknown, result) => {
      if (err) return reject(err instanceof Error ? err : new Error(String(err)));
      const failed = result.errors + result.non2xx;
      if (failed > 0) return reject(new Error(`${options.method} ${t.url}: ${failed} failed requests of ${result.requests.total}`));
      const ok = result['2xx'];
      resolve({ rps: ok / ((last - started) / 1000), cpuRps: ok / (cpuSeconds(t.server.child.pid) - cpuBefore) });
    });
    run.on('response', () => {
      last = performance.now();
    });
  });
}

/** A warm-up of `warmup` requests each, then `count` rounds of `amount` in rotating order: each target's rounds. */
export async function rotatingRounds(targets: Measured[], count: number, amount: number, warmup: number): Promise<Round[][]> {
  for (const t of targets) await rate(t, warmup);
  const rounds: Round[][] = targets.map(() => []);
  for (let round = 0; round < count; round++) {
    for (let i = 0; i < targets.length; i++) {
      const which = (round + i) % targets.length;
      const t = targets[which];
      if (t) rounds[which]?.push(await rate(t, amount));
    }
  }
  return rounds;
}

export const variantFigures = (label: string, own: Round[]): VariantFigures => ({
  label,
  rounds: own,
  rps: median(own.map((r) => r.rps)),
  cpuRps: median(own.map((r) => r.cpuRps)),
});

/** `of`'s figure over `against`'s, round by round. */
export function ratioOf(of: Round[], against: Round[], figure: keyof Round): Ratio {
  const ratios = of.map((r, round) => r[figure] / (against[round]?.[figure] ?? NaN));
  return { median: median(ratios), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75) };
}
