/**
 * One load run with autocannon, the same for every server the bench compares: CONNECTIONS connections for
 * SECONDS seconds. Requests per second count only 2xx answers; every other status and every socket error is a
 * failed request.
 */
import autocannon from 'autocannon';

export const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
export const CONNECTIONS = 16;

export interface LoadFigures {
  name: string;
  /** 2xx answers per second. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failed: number;
}

export interface LoadOptions {
  /** Seconds of the same load first, not counted (the JIT and the server's caches warm up). */
  warmupSeconds?: number;
  /** Throw on any failed request (the default) rather than count them. */
  strict?: boolean;
  /** Seconds of the counted run (default SECONDS). */
  seconds?: number;
}

export async function load(name: string, target: autocannon.Options, options: LoadOptions = {}): Promise<LoadFigures> {
  if (options.warmupSeconds) await autocannon({ connections: CONNECTIONS, ...target, duration: options.warmupSeconds });
  const result = await autocannon({ connections: CONNECTIONS, duration: options.seconds ?? SECONDS, ...target });
  const failed = result.errors + result.non2xx;
  if (failed > 0 && options.strict !== false) throw new Error(`${name}: ${failed} failed requests of ${result.requests.total}`);
  return { name, rps: result['2xx'] / result.duration, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, failed };
}

/** Rounds of one load as one figure: req/s over all of them, the median round's latencies, every request counted. */
export function combined(rounds: readonly LoadFigures[]): LoadFigures {
  const first = rounds[0];
  if (!first) throw new Error('no rounds to combine');
  const mid = (pick: (f: LoadFigures) => number): number => median(rounds.map(pick));
  return {
    name: first.name,
    rps: rounds.reduce((sum, f) => sum + f.rps, 0) / rounds.length,
    p50: mid((f) => f.p50),
    p99: mid((f) => f.p99),
    requests: rounds.reduce((sum, f) => sum + f.requests, 0),
    failed: rounds.reduce((sum, f) => sum + f.failed, 0),
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}
