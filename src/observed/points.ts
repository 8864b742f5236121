import { chargeFor, cmp, freezeAmount, isNegative, sub, ZERO } from '../points/index.ts';
import type { ActualUsage, PriceRule } from '../points/index.ts';
import type { CheckInfo, Deviation } from './history.ts';
import { idsOf, isRecord, isTerminal, named } from './task-view.ts';
import type { TaskPoints, TaskRead } from './task-view.ts';

export const POINTS_CHECKS = {
  submitQueued: { id: 'lifecycle.submit.queued', holds: 'a submission is answered with the task queued' },
  freeze: { id: 'billing.freeze.on-submit', holds: 'the submit answer shows the freeze: the price rule’s freeze for the normalized input (> 0 where priced), nothing charged or refunded' },
  frozenUnchanged: { id: 'billing.freeze.unchanged', holds: 'points.frozen is the same on every read of a task' },
  open: { id: 'billing.points.open-until-terminal', holds: 'before a terminal state nothing is charged or refunded' },
  settled: {
    id: 'billing.points.settled',
    holds: 'a terminal task’s points add up (failed/canceled: charged 0, refunded = frozen; succeeded: charged − collected + refunded = frozen), refunded ≤ frozen, none negative, never changing later',
  },
  price: { id: 'billing.charge.price', holds: 'a succeeded task is charged its price rule’s amount for its normalized input and actual usage' },
  balance: { id: 'billing.balance.moves', holds: 'the account balance moves by exactly the freeze (submit), the refund (cancel) or nothing (replay, reads)' },
} as const satisfies Record<string, CheckInfo>;
const C = POINTS_CHECKS;

/**
 * The points of one task over its reads (sorted by sentMs). Decimals through src/points, never floats.
 * @see reference "Conventions" Points, "States and transitions", the models' Price sections
 */
export function checkPoints(id: string, reads: readonly TaskRead[], prices: Readonly<Record<string, PriceRule>>): Deviation[] {
  const found: Deviation[] = [];
  const push = (check: CheckInfo, message: string, ...involved: TaskRead[]): void => {
    found.push({ check: check.id, message, requestIds: idsOf(...involved.map((r) => r.obs)) });
  };
  const withPoints = reads.filter((r): r is TaskRead & { view: { points: TaskPoints } } => r.view.points !== null);
  const firstPoints = withPoints[0];
  for (const r of withPoints) {
    const p = r.view.points;
    const rule = typeof r.view.model === 'string' ? prices[r.view.model] : undefined;
    if (r.obs.kind === 'submit') {
      if (r.view.status !== 'queued') push(C.submitQueued, `task ${id} was answered ${r.view.status} to its submission (${named(r.obs)})`, r);
      const expected = rule && isRecord(r.view.input) ? safely(() => freezeAmount(rule, r.view.input as Record<string, unknown>)) : null;
      const wrong = (expected !== null && cmp(p.frozen, expected) !== 0) || (expected !== null && cmp(expected, ZERO) > 0 && cmp(p.frozen, ZERO) <= 0);
      if (wrong || cmp(p.charged, ZERO) !== 0 || cmp(p.refunded, ZERO) !== 0) {
        push(C.freeze, `task ${id} submitted (${named(r.obs)}) with points ${show(p)}, expected frozen ${expected ?? '> 0'}, charged and refunded 0.000`, r);
      }
    }
    if (firstPoints && cmp(p.frozen, firstPoints.view.points.frozen) !== 0) {
      push(C.frozenUnchanged, `task ${id} frozen ${firstPoints.view.points.frozen} (${named(firstPoints.obs)}) became ${p.frozen} (${named(r.obs)})`, firstPoints, r);
    }
    if (r.obs.kind !== 'submit' && !isTerminal(r.view.status) && (cmp(p.charged, ZERO) !== 0 || cmp(p.refunded, ZERO) !== 0)) {
      push(C.open, `${r.view.status} task ${id} (${named(r.obs)}) shows points ${show(p)} before finishing`, r);
    }
  }

  const terminal = withPoints.find((r) => isTerminal(r.view.status));
  if (terminal) {
    const p = terminal.view.points;
    const problem = settlementProblem(terminal.view.status, p);
    if (problem) push(C.settled, `${terminal.view.status} task ${id} (${named(terminal.obs)}): ${problem}, got ${show(p)}`, terminal);
    for (const r of withPoints) {
      if (r !== terminal && r.view.status === terminal.view.status && !samePoints(r.view.points, p)) {
        push(C.settled, `the points of ${r.view.status} task ${id} changed after it finished: ${show(p)} (${named(terminal.obs)}) then ${show(r.view.points)} (${named(r.obs)})`, terminal, r);
      }
    }
    const rule = typeof terminal.view.model === 'string' ? prices[terminal.view.model] : undefined;
    if (terminal.view.status === 'succeeded' && rule && isRecord(terminal.view.input)) {
      const input = terminal.view.input;
      const expected = safely(() => chargeFor(rule, input, actualUsage(terminal.view.output)));
      if (expected !== null && cmp(expected, p.charged) !== 0) push(C.price, `succeeded task ${id} (${named(terminal.obs)}) charged ${p.charged}, its price is ${expected}`, terminal);
    }
  }
  return found;
}

/** What a finished task's points must be; null when they are. */
function settlementProblem(status: string, p: TaskPoints): string | null {
  if (Object.values(p).some(isNegative)) return 'negative points';
  if (cmp(p.refunded, p.frozen) > 0) return 'refunded more than frozen';
  if (status !== 'succeeded') return cmp(p.charged, ZERO) === 0 && cmp(p.refunded, p.frozen) === 0 ? null : 'expected nothing charged and all that was frozen refunded';
  // charged − collected + refunded = frozen with collected = max(0, charged − frozen): the task shows no collected field.
  const refunded = cmp(p.charged, p.frozen) < 0 ? sub(p.frozen, p.charged) : ZERO;
  return cmp(refunded, p.refunded) === 0 ? null : `expected refunded ${refunded} (frozen − charged, never below 0)`;
}

/**
 * Balance reads around a request: a submit moves it by −frozen, a replay by nothing, a cancel answered canceled
 * by +refunded, a read by nothing or (when the task finished meanwhile) by its settlement.
 */
export function checkBalance(id: string, reads: readonly TaskRead[]): Deviation[] {
  const found: Deviation[] = [];
  for (const r of reads) {
    const balance = r.obs.balance;
    const p = r.view.points;
    if (!balance || !p) continue;
    const moved = sub(balance.after, balance.before);
    const settle = sub(p.refunded, cmp(p.charged, p.frozen) > 0 ? sub(p.charged, p.frozen) : ZERO);
    const allowed =
      r.obs.kind === 'submit' ? [sub(ZERO, p.frozen)]
      : r.obs.kind === 'replay' ? [ZERO]
      : r.obs.kind === 'cancel' && r.view.status === 'canceled' ? [p.refunded]
      : isTerminal(r.view.status) ? [ZERO, settle]
      : [ZERO];
    if (!allowed.some((a) => cmp(a, moved) === 0)) {
      found.push({
        check: C.balance.id,
        message: `the balance moved by ${moved} around ${r.obs.kind} of task ${id} (${named(r.obs)}), expected ${allowed.join(' or ')}`,
        requestIds: idsOf(r.obs),
      });
    }
  }
  return found;
}

/** Actual usage as a succeeded task reports it: output.duration (seconds) and output.usage.output_tokens. */
function actualUsage(output: unknown): ActualUsage {
  const actual: ActualUsage = {};
  if (!isRecord(output)) return actual;
  if (typeof output.duration === 'number') actual.seconds = output.duration;
  if (isRecord(output.usage) && typeof output.usage.output_tokens === 'number') actual.output_tokens = output.usage.output_tokens;
  return actual;
}

/** A price the rule cannot give for this input (a field missing, usage unreported) is no deviation of points. */
function safely(price: () => string): string | null {
  try {
    return price();
  } catch {
    return null;
  }
}

const samePoints = (a: TaskPoints, b: TaskPoints): boolean => cmp(a.frozen, b.frozen) === 0 && cmp(a.charged, b.charged) === 0 && cmp(a.refunded, b.refunded) === 0;
const show = (p: TaskPoints): string => `frozen ${p.frozen}, charged ${p.charged}, refunded ${p.refunded}`;
