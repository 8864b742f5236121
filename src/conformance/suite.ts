import Big from 'big.js';
import { ALL_CHECKS } from './checks/index.ts';
import { curlOf } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import { CheckFailure, CheckSkipped, createClient } from './client.ts';
import { startCallbackReceiver } from './receiver.ts';
import { advanceClock, prepare } from './setup.ts';
import { loadResponseContract } from './spec.ts';
import type { Check, CheckContext, CheckResult, Need, ReceivedCallback } from './types.ts';
import { DEFAULT_BUDGET } from '../defaults/index.ts';
import { emulatorClock, wallClock } from './deployment-clock.ts';
import { behaviourResults } from './behaviour.ts';
import { probeBalance } from './balance-probe.ts';
import { createObserver } from '../observed/index.ts';
import { ownAccount } from './own-account.ts';
import { coverageOf } from './coverage-table/index.ts';
import type { Coverage } from './coverage-table/index.ts';

export interface SuiteOptions {
  baseUrl: string;
  /** The key to run as; not needed (nor used) with `admin`, where the suite makes its own account. */
  apiKey?: string;
  /** A key of another account, for the isolation checks. */
  secondApiKey?: string;
  only?: string[];
  skip?: string[];
  /** Points the suite may spend on a real deployment; checks that would go over are skipped. Unused with `admin`. */
  budget?: number;
  /**
   * The emulator's control API: the suite runs as a fresh account it funds there (no budget applies), makes a
   * second account, reads the signing secret and fast-forwards the clock.
   */
  admin?: { url: string; token: string };
  /** Callbacks: a public address that reaches `webhookListen` (or, without it, http://127.0.0.1:<listen>/). */
  webhookUrl?: string;
  webhookSecret?: string;
  webhookListen?: number;
  textModel?: string;
  /** Real milliseconds one request may take, its whole answer included (default 60000). */
  requestTimeoutMs?: number;
  /** Called once the suite is set up, before the first check. */
  onStart?: (setup: Pick<SuiteReport, 'account' | 'budget'>) => void;
  /** Called after each check. */
  onResult?: (result: CheckResult) => void;
}

export interface SuiteReport {
  baseUrl: string;
  startedAt: string;
  durationMs: number;
  passed: number;
  failed: number;
  skipped: number;
  /**
   * The run's score against the coverage table (src/conformance/coverage-table): of the rules reachable through the
   * public API, and of all of them, how many this run exercised (passed or failed) and how many passed.
   */
  coverage: Coverage;
  /** The account the suite made and funded through the control API (it ran as that account's key), or null. */
  account: { id: string; points: string } | null;
  /** Points the suite could spend; null when none applies (an account funded through the control API). */
  budget: number | null;
  results: CheckResult[];
}

export { DEFAULT_BUDGET };

/** `*` in a pattern matches any run of characters (`tasks.*`, `*.stream.*`). */
export function matchesGlob(id: string, pattern: string): boolean {
  const regex = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return regex.test(id);
}

/**
 * Runs the contract against a deployment: each selected check in order, generic checks on every answer,
 * a budget for what real deployments charge, and skips (with the reason) for what the options cannot provide.
 * Usable from the CLI (`svc-emulator conformance`) and from a project's own test suite.
 */
export async function runConformance(options: SuiteOptions): Promise<SuiteReport> {
  const started = Date.now();
  const contract = loadResponseContract();
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const admin = options.admin ?? null;
  const setup = await prepare({ ...options, timeoutMs });
  // Every answer the suite's own account gets is also a read of the behaviour checks (src/observed), judged at the end.
  const clock = admin ? await emulatorClock(admin, timeoutMs) : wallClock();
  const observer = createObserver();
  const api = createClient(options.baseUrl, setup.apiKey, contract, timeoutMs, { now: clock.now, seen: observer.exchange });
  // The second key's answers too: a task of the suite's account must never show through it (tasks.isolation.observed).
  const otherObserver = createObserver();
  const other = setup.secondKey ? createClient(options.baseUrl, setup.secondKey, contract, timeoutMs, { now: clock.now, seen: otherObserver.exchange }) : null;
  const own = admin && setup.account ? ownAccount(observer, admin, setup.account.id, timeoutMs) : null;
  const webhookSecret = options.webhookSecret ?? setup.account?.webhookSecret;
  const listenPort = options.webhookListen ?? (options.webhookUrl ? undefined : admin ? 0 : undefined);
  const receiver = listenPort !== undefined ? await startCallbackReceiver(listenPort, { now: clock.read }) : null;
  const webhookUrl = options.webhookUrl ?? (receiver ? `http://127.0.0.1:${receiver.port}/` : undefined);
  const received: ReceivedCallback[] = receiver?.received ?? [];
  const account = setup.account ? { id: setup.account.id, points: setup.account.points } : null;
  // Budget limits are for real points: an account funded through the control API spends nothing real.
  const limit = account ? null : (options.budget ?? DEFAULT_BUDGET);
  options.onStart?.({ account, budget: limit });

  const wait = async (seconds: number): Promise<void> => {
    if (admin) {
      await advanceClock(admin, seconds, timeoutMs);
      await clock.sync();
    } else {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  };
  const available: Record<Need, string | null> = {
    secondKey: other ? null : 'needs a second key (--second-api-key) or the control API (--admin-url)',
    webhook: webhookUrl && webhookSecret && receiver ? null : 'needs a callback receiver (--webhook-listen, and --webhook-secret without --admin-url)',
    admin: admin ? null : 'needs the control API (--admin-url, --admin-token)',
  };

  // Decimal arithmetic: a float budget would report 111.19999999999999 points left.
  let budget = limit === null ? null : new Big(limit);
  const results: CheckResult[] = [];
  try {
    for (const check of ALL_CHECKS) {
      if (options.only?.length && !options.only.some((p) => matchesGlob(check.id, p))) continue;
      if (options.skip?.some((p) => matchesGlob(check.id, p))) continue;
      const base = { id: check.id, group: check.group, title: check.title };
      const missing = (check.needs ?? []).map((n) => available[n]).find((reason) => reason !== null);
      let result: CheckResult;
      if (missing) result = { ...base, status: 'skipped', durationMs: 0, reason: missing };
      else if (budget?.lt(check.cost)) result = { ...base, status: 'skipped', durationMs: 0, reason: `would spend up to ${check.cost} points; ${budget.toString()} left of the budget of ${limit} (--budget)` };
      else {
        budget = budget?.minus(check.cost) ?? null;
        result = await runOne(check, {
          api,
          textModel: options.textModel ?? 'svc-text-lite',
          other,
          contract,
          wait,
          admin,
          ownAccount: own,
          webhook: webhookUrl && webhookSecret ? { url: webhookUrl, secret: webhookSecret, received, waitFor: (count, seconds) => waitForCount(received, count, seconds, wait, admin !== null) } : null,
          expect(condition, message, exchange, expected, actual) {
            if (!condition) throw new CheckFailure(message, exchange, expected, actual);
          },
        });
      }
      results.push(result);
      options.onResult?.(result);
    }
    for (const callback of received) {
      observer.callback({
        headers: callback.headers,
        body: callback.raw,
        receivedMs: callback.receivedMs ?? clock.now(),
        ...(callback.receivedWallMs !== undefined ? { receivedWallMs: callback.receivedWallMs } : {}),
        ...(webhookSecret ? { secrets: [webhookSecret] } : {}),
        ...(callback.answered !== undefined ? { answered: callback.answered } : {}),
      });
    }
    const selected = (id: string): boolean => (!options.only?.length || options.only.some((p) => matchesGlob(id, p))) && !options.skip?.some((p) => matchesGlob(id, p));
    if (admin && setup.account && selected('billing.balance.moves')) await probeBalance(api, observer, admin, setup.account.id, timeoutMs);
    const others = other ? [{ account: '“second”', tasks: otherObserver.history.tasks ?? [], pages: otherObserver.history.pages ?? [] }] : [];
    for (const result of behaviourResults({ ...observer.history, others }, { prices: contract.prices }, api.log, options.baseUrl, selected)) {
      results.push(result);
      options.onResult?.(result);
    }
  } finally {
    await receiver?.close();
  }
  return {
    baseUrl: options.baseUrl,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    passed: results.filter((r) => r.status === 'passed').length,
    failed: results.filter((r) => r.status === 'failed').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
    coverage: coverageOf(results),
    account,
    budget: limit,
    results,
  };

  async function runOne(check: Check, ctx: CheckContext): Promise<CheckResult> {
    const t0 = Date.now();
    const base = { id: check.id, group: check.group, title: check.title };
    const before = [api.log.length, other?.log.length ?? 0] as const;
    try {
      await check.run(ctx);
      return { ...base, status: 'passed', durationMs: Date.now() - t0 };
    } catch (err) {
      if (err instanceof CheckSkipped) return { ...base, status: 'skipped', durationMs: Date.now() - t0, reason: err.message };
      // An error of the check's own code (an answer it could not read) names the last request it made.
      const last: Exchange | null = [...api.log.slice(before[0]), ...(other?.log.slice(before[1]) ?? [])].at(-1) ?? null;
      const failure = err instanceof CheckFailure ? err : new CheckFailure(`the check could not run: ${(err as Error).message}`, last);
      const exchange = failure.exchange ?? null;
      return {
        ...base,
        status: 'failed',
        durationMs: Date.now() - t0,
        failure: {
          message: failure.message,
          request: exchange ? { method: exchange.method, path: exchange.path, requestId: exchange.requestId } : null,
          ...(failure.expected !== undefined ? { expected: failure.expected } : {}),
          ...(failure.actual !== undefined ? { actual: failure.actual } : {}),
          curl: exchange ? curlOf(options.baseUrl, exchange) : null,
        },
      };
    }
  }
}

async function waitForCount(received: ReceivedCallback[], count: number, seconds: number, wait: (s: number) => Promise<void>, virtual: boolean): Promise<void> {
  for (let waited = 0; received.length < count && waited < seconds; waited += 1) {
    // On the emulator a callback is sent while the clock advances; elsewhere it arrives in real time.
    if (virtual) await wait(1);
    else await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
