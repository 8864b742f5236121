import { machineNow } from '../clock/index.ts';
import { createRandom, ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { ACKNOWLEDGED_KINDS } from '../verdict/index.ts';
import type { ReceiverEffect } from '../verdict/index.ts';
import { buildBattery, scenariosFor } from './battery.ts';
import type { Scenario, Step } from './battery.ts';
import { readEffect } from './effects.ts';
import { resolveOptions } from './options.ts';
import type { CheckReceiverOptions, ResolvedOptions } from './options.ts';
import { reportOf } from './report.ts';
import type { ReceiverCheckReport, Sent } from './report.ts';
import { sendDelivery } from './send.ts';
import { deliveryHeaders } from './sign.ts';
import type { Secrets } from './sign.ts';

/** A run decided before anything is sent: the secrets it signs with, the checks it judges, the scenarios it sends. */
export interface Plan {
  options: ResolvedOptions;
  secrets: Secrets;
  /** The chosen checks, and receiver.acknowledges when a chosen one sends what must be acknowledged (it judges their time). */
  checks: ReadonlySet<string>;
  scenarios: Scenario[];
}

export function planRun(options: ResolvedOptions, random: Random, nowMs: number): Plan {
  const battery = buildBattery(random, nowMs, options.slowBodyMs);
  const scenarios = scenariosFor(battery, options.checks);
  const checks = new Set(options.checks);
  if (scenarios.some((s) => s.steps.some((step) => ACKNOWLEDGED_KINDS.includes(step.kind)))) checks.add('receiver.acknowledges');
  const secrets: Secrets = {
    secret: options.secret,
    rotated: options.rotatedSecret ?? ids.webhookSecret(random),
    rotatedGiven: options.rotatedSecret !== null,
    strangers: [ids.webhookSecret(random), ids.webhookSecret(random), ids.webhookSecret(random)],
  };
  return { options, secrets, checks, scenarios };
}

/** The request a step makes when it is sent at `nowMs`: the headers signed then, the body's bytes. */
export function requestOf(plan: Plan, step: Step, nowMs: number): { headers: Record<string, string>; body: Buffer } {
  const timestamp = Math.floor(nowMs / 1000) + step.offsetSeconds;
  return { headers: deliveryHeaders(plan.secrets, step.webhookId, timestamp, step.signing), body: Buffer.from(step.body, 'utf8') };
}

/**
 * Sends the plan's scenarios: the first alone (an address that does not answer stops the run there, with nothing
 * else sent), then the rest side by side, each scenario's steps in order, at most `concurrency` at once. A
 * connection that cannot be made ends the run: what is in flight finishes, nothing more starts, and the
 * ReceiverUnreachable is thrown.
 */
async function sendAll(plan: Plan, now: () => number): Promise<{ sent: Sent[]; effects: ReceiverEffect[] }> {
  const { options } = plan;
  const sent: Sent[][] = plan.scenarios.map(() => []);
  const effects: ReceiverEffect[] = [];
  let failed: { error: unknown } | null = null;
  const run = async (i: number): Promise<void> => {
    const scenario = plan.scenarios[i] as Scenario;
    for (const step of scenario.steps) {
      if (failed) return;
      const { headers, body } = requestOf(plan, step, now());
      const answered = await sendDelivery({ url: options.url, headers, body, timeoutMs: options.timeoutMs, trickleMs: step.slow ? options.slowBodyMs : null }, now);
      (sent[i] as Sent[]).push({ step, answered });
    }
    if (scenario.effects && options.effectsUrl !== null && plan.checks.has('receiver.acts-once')) {
      effects.push(await readEffect(options.effectsUrl, scenario.effects, options.timeoutMs, now));
    }
  };
  const guarded = (i: number): Promise<void> => run(i).catch((error: unknown) => void (failed ??= { error }));
  await guarded(0);
  let next = 1;
  const lane = async (): Promise<void> => {
    while (!failed && next < plan.scenarios.length) await guarded(next++);
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  if (failed) throw (failed as { error: unknown }).error;
  return { sent: sent.flat(), effects };
}

/**
 * Sends the battery of callbacks to a receiver and judges its answers, one check per rule (the verdict's receiver
 * rules, fed by this run's own deliveries). Resolves with the report `svc-emulator receiver-check --json` writes;
 * rejects with a ReceiverCheckOptionError for an option that cannot be used and a ReceiverUnreachable when no
 * connection could be made to the receiver.
 * @see reference "Events" → Task callbacks
 */
export async function checkReceiver(options: CheckReceiverOptions): Promise<ReceiverCheckReport> {
  const resolved = resolveOptions(options);
  const now = options.now ?? machineNow;
  const started = now();
  const plan = planRun(resolved, createRandom(), started);
  options.onStart?.({ deliveries: plan.scenarios.reduce((n, s) => n + s.steps.length, 0), checks: plan.checks.size });
  const { sent, effects } = await sendAll(plan, now);
  const secrets = [resolved.secret, plan.secrets.rotated];
  return reportOf(
    { url: resolved.url, checks: plan.checks, timeoutMs: resolved.timeoutMs, secrets, effectsGiven: resolved.effectsUrl !== null },
    sent,
    effects,
    now() - started,
  );
}
