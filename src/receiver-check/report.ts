import { escapeXml } from '../junit/index.ts';
import { RECEIVER_RULES } from '../verdict/index.ts';
import type { CheckResult, ReceiverDelivery, ReceiverEffect } from '../verdict/index.ts';
import { redactSecrets } from '../wire/index.ts';
import type { Step } from './battery.ts';
import type { Answered } from './send.ts';

/** One delivery a check judged: what was sent, and what came back how fast. */
export interface DeliveryEvidence {
  webhook_id: string;
  /** What it was sent to find out (a rule's kind of delivery: `message`, `duplicate`, `stale_timestamp`, ...). */
  kind: ReceiverDelivery['kind'];
  sent: string;
  outcome: Answered['outcome'];
  elapsed_ms: number;
  /** The first bytes of the receiver's answer (or why there was none), secrets hidden. */
  answer: string;
}

export interface ReceiverCheckResult extends CheckResult {
  /** What a careful receiver does, and why. */
  holds: string;
  deliveries: DeliveryEvidence[];
  /** receiver.acts-once: what the effects hook said. */
  effects?: { task_id: string; webhook_id: string; acted: number | null; detail: string | null }[];
}

/** What `checkReceiver` returns and `--json` writes: the same facts. No secret is ever in it. */
export interface ReceiverCheckReport {
  url: string;
  /** False when any check failed; a check that could not be judged does not fail it. */
  ok: boolean;
  counts: { pass: number; fail: number; not_exercised: number };
  timeout_ms: number;
  /** Deliveries sent. */
  sent: number;
  duration_ms: number;
  checks: ReceiverCheckResult[];
}

/** A delivery as sent and answered. */
export interface Sent {
  step: Step;
  answered: Answered;
}

/**
 * Text with the run's secrets taken out: the whole `whsec_` string and its Base64 part wherever they appear (a
 * receiver may echo anything), then whatever else looks like a secret (src/wire's patterns).
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    out = out.replaceAll(secret, 'whsec_[redacted]');
    const key = secret.slice('whsec_'.length);
    if (key.length >= 8) out = out.replaceAll(key, '[redacted]');
  }
  return redactSecrets(out).text;
}

/**
 * The report: each chosen check judged by the shared receiver rules (src/verdict's, the verdict's own) over the
 * answers, with the deliveries it judged as evidence.
 */
export function reportOf(
  run: { url: URL; checks: ReadonlySet<string>; timeoutMs: number; secrets: readonly string[]; effectsGiven: boolean },
  sent: readonly Sent[],
  effects: readonly ReceiverEffect[],
  durationMs: number,
): ReceiverCheckReport {
  const answers: ReceiverDelivery[] = sent.map(({ step, answered }) => ({
    webhookId: step.webhookId,
    kind: step.kind,
    outcome: answered.outcome,
    elapsedMs: answered.elapsedMs,
    sent: step.sent,
  }));
  const history = run.effectsGiven ? { answers, effects } : { answers };
  const checks = RECEIVER_RULES.filter((rule) => run.checks.has(rule.id)).map((rule): ReceiverCheckResult => {
    const judged = rule.judge(history, { callbackTimeoutMs: run.timeoutMs });
    const deliveries = sent
      .filter(({ step }) => rule.kinds.includes(step.kind))
      .map(({ step, answered }) => ({
        webhook_id: step.webhookId,
        kind: step.kind,
        sent: step.sent,
        outcome: answered.outcome,
        elapsed_ms: answered.elapsedMs,
        answer: scrub(answered.excerpt, run.secrets),
      }));
    const result: ReceiverCheckResult = { ...judged, reason: judged.reason === null ? null : scrub(judged.reason, run.secrets), holds: rule.holds, deliveries };
    if (rule.id === 'receiver.acts-once' && run.effectsGiven) {
      result.effects = effects.map((e) => ({ task_id: e.taskId, webhook_id: e.webhookId, acted: e.acted, detail: e.detail === null ? null : scrub(e.detail, run.secrets) }));
    }
    return result;
  });
  const count = (status: CheckResult['status']): number => checks.filter((c) => c.status === status).length;
  const counts = { pass: count('pass'), fail: count('fail'), not_exercised: count('not_exercised') };
  return { url: scrub(run.url.href, run.secrets), ok: counts.fail === 0, counts, timeout_ms: run.timeoutMs, sent: sent.length, duration_ms: durationMs, checks };
}

const outcomeText = (d: DeliveryEvidence): string =>
  typeof d.outcome === 'number' ? `answered ${d.outcome} in ${d.elapsed_ms} ms` : d.outcome === 'timeout' ? `no answer within the timeout` : `connection broken (${d.answer})`;

/** One line per check (`pass`, `FAIL` with its reason and the deliveries that show it, `n/a` with why), then the counts. */
export function reportLines(report: ReceiverCheckReport): string[] {
  const lines = report.checks.flatMap((c) => {
    if (c.status === 'pass') return [`pass ${c.id}`];
    if (c.status === 'not_exercised') return [`n/a  ${c.id}: ${c.reason ?? ''}`];
    const shown = c.deliveries.filter((d) => c.evidence.includes(d.webhook_id));
    return [`FAIL ${c.id}: ${c.reason ?? ''}`, ...shown.map((d) => `       ${d.webhook_id} ${outcomeText(d)}: ${d.sent}`)];
  });
  return [...lines, `receiver-check: ${report.counts.pass} passed, ${report.counts.fail} failed, ${report.counts.not_exercised} not exercised`];
}

/**
 * The report as JUnit XML: one testcase per check, failing with its reason and the deliveries that show it,
 * skipped when it could not be judged.
 */
export function receiverJunitXml(report: ReceiverCheckReport): string {
  const cases = report.checks.map((c) => {
    const name = `classname="receiver-check.receiver" name="${escapeXml(c.id)}"`;
    if (c.status === 'pass') return `    <testcase ${name}/>`;
    if (c.status === 'not_exercised') return `    <testcase ${name}><skipped message="${escapeXml(c.reason ?? '')}"/></testcase>`;
    const shown = c.deliveries.filter((d) => c.evidence.includes(d.webhook_id)).map((d) => `${d.webhook_id} ${outcomeText(d)}: ${d.sent}`);
    const effects = (c.effects ?? []).map((e) => `task ${e.task_id}: acted ${e.acted ?? '?'} time(s)${e.detail ? ` (${e.detail})` : ''}`);
    const text = [c.reason ?? '', ...shown, ...effects, `what a careful receiver does: ${c.holds}`].join('\n');
    return `    <testcase ${name}><failure message="${escapeXml(c.reason ?? '')}" type="${escapeXml(c.id)}">${escapeXml(text)}</failure></testcase>`;
  });
  const counts = `tests="${report.checks.length}" failures="${report.counts.fail}" errors="0" skipped="${report.counts.not_exercised}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="svc-emulator receiver-check" ${counts} time="${(report.duration_ms / 1000).toFixed(3)}">`,
    `  <testsuite name="receiver-check ${escapeXml(report.url)}" ${counts}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
