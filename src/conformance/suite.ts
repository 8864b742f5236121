import { ALL_CHECKS, textModel } from './checks/index.ts';
import { CheckFailure, createClient, curlOf } from './client.ts';
import { startCallbackReceiver } from './receiver.ts';
import { loadResponseContract } from './spec.ts';
import type { Check, CheckContext, CheckResult, Need, ReceivedCallback } from './types.ts';
import { DEFAULT_BUDGET } from './defaults.ts';

export interface SuiteOptions {
  baseUrl: string;
  apiKey: string;
  /** A key of another account, for the isolation checks. */
  secondApiKey?: string;
  only?: string[];
  skip?: string[];
  /** Points the suite may spend; checks that would go over are skipped. */
  budget?: number;
  /** The emulator's control API: fast-forwards the clock, and makes a second account when none is given. */
  admin?: { url: string; token: string };
  /** Callbacks: a public address that reaches `webhookListen` (or, without it, http://127.0.0.1:<listen>/). */
  webhookUrl?: string;
  webhookSecret?: string;
  webhookListen?: number;
  textModel?: string;
  /** Real milliseconds one request may take, its whole answer included (default 60000). */
  requestTimeoutMs?: number;
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
  textModel.id = options.textModel ?? 'svc-text-lite';
  const api = createClient(options.baseUrl, options.apiKey, contract, options.requestTimeoutMs);
  const admin = options.admin ?? null;
  const secondKey = options.secondApiKey ?? (admin ? await makeSecondKey(admin) : undefined);
  const other = secondKey ? createClient(options.baseUrl, secondKey, contract, options.requestTimeoutMs) : null;
  const webhookSecret = options.webhookSecret ?? (admin ? await accountSecret(admin, options.apiKey) : undefined);
  const listenPort = options.webhookListen ?? (options.webhookUrl ? undefined : admin ? 0 : undefined);
  const receiver = listenPort !== undefined ? await startCallbackReceiver(listenPort) : null;
  const webhookUrl = options.webhookUrl ?? (receiver ? `http://127.0.0.1:${receiver.port}/` : undefined);
  const received: ReceivedCallback[] = receiver?.received ?? [];

  const wait = async (seconds: number): Promise<void> => {
    if (admin) {
      const res = await fetch(`${admin.url}/_emulator/clock/advance`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ seconds }),
      });
      if (!res.ok) throw new Error(`advancing the emulator's clock: ${res.status}`);
    } else {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  };
  const available: Record<Need, string | null> = {
    secondKey: other ? null : 'needs a second key (--second-api-key) or the control API (--admin-url)',
    webhook: webhookUrl && webhookSecret && receiver ? null : 'needs a callback receiver (--webhook-listen, and --webhook-secret without --admin-url)',
    admin: admin ? null : 'needs the control API (--admin-url, --admin-token)',
  };

  let budget = options.budget ?? DEFAULT_BUDGET;
  const results: CheckResult[] = [];
  try {
    for (const check of ALL_CHECKS) {
      if (options.only?.length && !options.only.some((p) => matchesGlob(check.id, p))) continue;
      if (options.skip?.some((p) => matchesGlob(check.id, p))) continue;
      const base = { id: check.id, group: check.group, title: check.title };
      const missing = (check.needs ?? []).map((n) => available[n]).find((reason) => reason !== null);
      let result: CheckResult;
      if (missing) result = { ...base, status: 'skipped', durationMs: 0, reason: missing };
      else if (check.cost > budget) result = { ...base, status: 'skipped', durationMs: 0, reason: `would spend up to ${check.cost} points; ${budget} left of the budget` };
      else {
        budget -= check.cost;
        result = await runOne(check, {
          api,
          other,
          contract,
          wait,
          admin,
          webhook: webhookUrl && webhookSecret ? { url: webhookUrl, secret: webhookSecret, received, waitFor: (count, seconds) => waitForCount(received, count, seconds, wait, admin !== null) } : null,
          expect(condition, message, exchange, expected, actual) {
            if (!condition) throw new CheckFailure(message, exchange, expected, actual);
          },
        });
      }
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
    results,
  };

  async function runOne(check: Check, ctx: CheckContext): Promise<CheckResult> {
    const t0 = Date.now();
    const base = { id: check.id, group: check.group, title: check.title };
    try {
      await check.run(ctx);
      return { ...base, status: 'passed', durationMs: Date.now() - t0 };
    } catch (err) {
      const failure = err instanceof CheckFailure ? err : new CheckFailure(`the check could not run: ${(err as Error).message}`, null);
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

async function makeSecondKey(admin: { url: string; token: string }): Promise<string> {
  const headers = { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'application/json' };
  const account = (await (await fetch(`${admin.url}/_emulator/accounts`, { method: 'POST', headers, body: '{}' })).json()) as { id: string };
  const key = (await (await fetch(`${admin.url}/_emulator/accounts/${account.id}/keys`, { method: 'POST', headers, body: '{}' })).json()) as { key: string };
  return key.key;
}

/** The signing secret of the key's account, from the control API. */
async function accountSecret(admin: { url: string; token: string }, apiKey: string): Promise<string | undefined> {
  const headers = { Authorization: `Bearer ${admin.token}` };
  const key = await fetch(`${admin.url}/_emulator/keys/${encodeURIComponent(apiKey)}`, { headers });
  if (!key.ok) return undefined;
  const { account_id } = (await key.json()) as { account_id: string };
  const account = (await (await fetch(`${admin.url}/_emulator/accounts/${account_id}`, { headers })).json()) as { webhook_secret?: string };
  return account.webhook_secret;
}
