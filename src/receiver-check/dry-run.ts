import type { Plan } from './run.ts';
import { effectsAddress } from './effects.ts';
import { scrub } from './report.ts';
import { describeSignature } from './sign.ts';

const BODY_SHOWN = 120;

const when = (offsetSeconds: number): string => (offsetSeconds === 0 ? 'the time of sending' : `${Math.abs(offsetSeconds)} s ${offsetSeconds < 0 ? 'before' : 'after'} the time of sending`);

/**
 * What a run would send, one delivery a paragraph, for `--dry-run`: where, under which webhook-id, for which
 * checks, how it is signed (by which secret, never the secret or the signature), and the start of its body.
 * Deliveries of one scenario go one after the other; the scenarios side by side.
 */
export function describePlan(plan: Plan): string[] {
  const { options } = plan;
  const secrets = [options.secret, plan.secrets.rotated];
  const url = scrub(options.url.href, secrets);
  const steps = plan.scenarios.reduce((n, s) => n + s.steps.length, 0);
  const lines = [`receiver-check --dry-run: would send ${steps} ${steps === 1 ? 'delivery' : 'deliveries'} to ${url} for ${plan.checks.size === 1 ? 'one check' : `${plan.checks.size} checks`}; nothing is sent`];
  let n = 0;
  for (const scenario of plan.scenarios) {
    let previous: number | null = null;
    for (const step of scenario.steps) {
      n += 1;
      const after = previous === null ? '' : `, once #${previous} is answered`;
      lines.push(
        `#${n} POST ${url} webhook-id ${step.webhookId}${after} (${scenario.for.join(', ')})`,
        `    ${step.sent}`,
        `    webhook-timestamp: ${when(step.offsetSeconds)}; webhook-signature: ${describeSignature(plan.secrets, step.signing)}${step.slow ? `; the body in pieces over ${options.slowBodyMs} ms` : ''}`,
        `    body, ${Buffer.byteLength(step.body)} bytes: ${step.body.replace(/\s+/g, ' ').slice(0, BODY_SHOWN)}${step.body.length > BODY_SHOWN ? '…' : ''}`,
      );
      previous = n;
    }
    if (scenario.effects && options.effectsUrl !== null && plan.checks.has('receiver.acts-once')) {
      lines.push(`   then GET ${scrub(effectsAddress(options.effectsUrl, scenario.effects.taskId), secrets)}: how many times the receiver acted on that task`);
    }
  }
  return lines;
}
