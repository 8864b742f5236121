import Big from 'big.js';
import { expect } from 'vitest';

/**
 * The points invariants of one account, on what the control API shows (its balances, its ledger, its tasks), in
 * exact decimals. Shared by the suites that drive the emulator hard (test/concurrency, test/crash); each adds
 * its own checks of how many entries a task may have.
 * @see reference "What the service does" (points frozen, settled, refunded), "Task object" points
 */

export interface PointsEntry {
  account_id: string;
  kind: 'fund' | 'freeze' | 'charge' | 'refund';
  points: string;
  task_id: string | null;
  call_id?: string;
}

export interface PointsTask {
  id: string;
  status: string;
  points: { frozen: string; charged: string; refunded: string };
}

export interface Balances {
  available: string;
  frozen: string;
  charged: string;
}

/** One task's or text call's own ledger entries. */
export interface Entries<E extends PointsEntry = PointsEntry> {
  freezes: E[];
  charges: E[];
  refunds: E[];
}

export const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled']);

export const sum = (values: string[]): Big => values.reduce((total, value) => total.plus(value), new Big(0));

/** Exact decimal equality, with both sides in the message. */
export const same = (actual: Big | string, expected: Big | string, what: string): void =>
  expect(new Big(actual).eq(expected), `${what}: ${new Big(actual).toFixed(3)} ≠ ${new Big(expected).toFixed(3)}`).toBe(true);

/**
 * funded (its `fund` entries; exactly `opening` when known) = available + frozen + charged; frozen and charged
 * are what the entries say; every entry is for a task of the account or a text call; every task's points are its
 * own entries, frozen once, and a finished task has frozen = charged + refunded while an unfinished one has
 * nothing settled; every text call is frozen once and settled once, in full; only unfinished tasks hold points.
 * Returns each task's and each text call's entries, for the caller's own checks.
 */
export function expectAccountPoints<E extends PointsEntry>(
  account: { id: string; opening?: string },
  view: Balances,
  ledger: E[],
  tasks: PointsTask[],
  nameCall: (callId: string) => string = (callId) => `text call ${callId}`,
): { ofTask(taskId: string): Entries<E>; ofCall(callId: string): Entries<E> } {
  const where = `account ${account.id}`;
  const of = (kind: PointsEntry['kind'], match: (e: E) => boolean = () => true): E[] => ledger.filter((e) => e.kind === kind && match(e));
  const points = (entries: E[]): string[] => entries.map((e) => e.points);
  const entries = (match: (e: E) => boolean): Entries<E> => ({ freezes: of('freeze', match), charges: of('charge', match), refunds: of('refund', match) });
  const ofTask = (taskId: string): Entries<E> => entries((e) => e.task_id === taskId);
  const ofCall = (callId: string): Entries<E> => entries((e) => e.call_id === callId);

  for (const e of ledger) {
    expect(e.account_id).toBe(account.id);
    expect(new Big(e.points).gt(0), `${where}: a ledger entry of ${e.points}`).toBe(true);
  }
  const funded = sum(points(of('fund')));
  if (account.opening !== undefined) same(funded, account.opening, `${where}: funded`);
  same(new Big(view.available).plus(view.frozen).plus(view.charged), funded, `${where}: available + frozen + charged = funded`);
  same(sum(points(of('freeze'))).minus(sum(points(of('charge')))).minus(sum(points(of('refund')))), view.frozen, `${where}: frozen`);
  same(sum(points(of('charge'))), view.charged, `${where}: charged`);

  const ids = new Set(tasks.map((task) => task.id));
  for (const e of ledger) if (e.task_id !== null) expect(ids.has(e.task_id), `${where}: entry for unknown task ${e.task_id}`).toBe(true);
  let unfinishedFrozen = new Big(0);
  for (const task of tasks) {
    const { freezes, charges, refunds } = ofTask(task.id);
    const label = `task ${task.id} (${task.status})`;
    expect(freezes, `${label}: frozen once`).toHaveLength(1);
    same(sum(points(freezes)), task.points.frozen, `${label}: frozen vs its freezes`);
    same(sum(points(charges)), task.points.charged, `${label}: charged vs its charges`);
    same(sum(points(refunds)), task.points.refunded, `${label}: refunded vs its refunds`);
    if (TERMINAL.has(task.status)) {
      same(new Big(task.points.charged).plus(task.points.refunded), task.points.frozen, `${label}: frozen = charged + refunded`);
    } else {
      expect([charges.length, refunds.length], `${label}: nothing settled`).toEqual([0, 0]);
      unfinishedFrozen = unfinishedFrozen.plus(task.points.frozen);
    }
  }
  for (const call of new Set(ledger.flatMap((e) => (e.call_id ? [e.call_id] : [])))) {
    const { freezes, charges, refunds } = ofCall(call);
    expect(freezes, `${nameCall(call)}: frozen once`).toHaveLength(1);
    expect(charges.length + refunds.length, `${nameCall(call)}: settled`).toBeGreaterThanOrEqual(1);
    expect([charges.length, refunds.length].every((n) => n <= 1), `${nameCall(call)}: settled once`).toBe(true);
    same(sum(points(charges)).plus(sum(points(refunds))), sum(points(freezes)), `${nameCall(call)}: frozen = charged + refunded`);
  }
  same(unfinishedFrozen, view.frozen, `${where}: frozen vs its unfinished tasks`);
  return { ofTask, ofCall };
}
