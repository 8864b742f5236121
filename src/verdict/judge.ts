import { CLIENT_CHECKS } from './client-checks.ts';
import { RECEIVER_CHECKS } from './receiver-checks.ts';
import type { Check, CheckResult, ClientLog, VerdictLimits } from './types.ts';

/** The thresholds the README documents; each can be set for one verdict. */
export const DEFAULT_LIMITS: VerdictLimits = {
  // A retry comes within a minute of its failure; later, a same submit is a new order.
  retryWindowMs: 60_000,
  // The official SDKs try 3 times by default; 6 is as many as the service tries a callback (the first and 5 retries).
  maxAttempts: 6,
  attemptWindowMs: 10_000,
  // The SDKs' shortest backoff is 0.375 s; an immediate retry hits the same failure.
  minRetryWaitMs: 250,
  // The reference's polling guidance: the first interval at least 3 seconds.
  minPollIntervalMs: 3_000,
  // The reference's callback response time.
  callbackTimeoutMs: 10_000,
};

export const VERDICT_CHECKS: readonly Check[] = [...CLIENT_CHECKS, ...RECEIVER_CHECKS];

export interface Verdict {
  /** False when any check failed; checks not exercised do not fail it. */
  ok: boolean;
  counts: { pass: number; fail: number; not_exercised: number };
  checks: CheckResult[];
}

export function judge(log: ClientLog, limits: Partial<VerdictLimits> = {}): Verdict {
  const all = { ...DEFAULT_LIMITS, ...limits };
  const checks = VERDICT_CHECKS.map((check) => check.judge(log, all));
  const count = (status: CheckResult['status']) => checks.filter((c) => c.status === status).length;
  const counts = { pass: count('pass'), fail: count('fail'), not_exercised: count('not_exercised') };
  return { ok: counts.fail === 0, counts, checks };
}
