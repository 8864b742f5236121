import Big from 'big.js';
import { expect } from 'vitest';
import type { Acknowledged, TestAccount } from './acknowledged.ts';
import { expectStatus } from './emulator-process.ts';
import type { Client } from './emulator-process.ts';

/**
 * The invariants checked after every restart, from the control API: each account's points in exact decimals
 * (funded = available + frozen + charged, funded from its ledger, every task's points its own entries, every
 * finished task frozen = charged + refunded), and where each task may be given what was acknowledged.
 * @see reference "What the service does" (freeze, settle, refund), "States and transitions"
 */

export interface Task {
  id: string;
  model: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  points: { frozen: string; charged: string; refunded: string };
  error: { code: string; message: string } | null;
}

export interface Listed {
  account_id: string;
  scenario: string;
  task: Task;
}

interface LedgerEntry {
  account_id: string;
  kind: 'fund' | 'freeze' | 'charge' | 'refund';
  points: string;
  task_id: string | null;
  call_id?: string;
}

export const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled']);
const sum = (values: string[]): Big => values.reduce((total, value) => total.plus(value), new Big(0));
const same = (actual: Big | string, expected: Big | string, what: string): void =>
  expect(new Big(actual).eq(expected), `${what}: ${new Big(actual).toFixed(3)} ≠ ${new Big(expected).toFixed(3)}`).toBe(true);

/** Every task of the account, as the control API lists them (with their scenario). */
export async function tasksOf(admin: Client, accountId: string): Promise<Listed[]> {
  const listed = expectStatus<{ data: Listed[] }>(await admin.get(`/_emulator/tasks?account=${accountId}&limit=1000`), 200, 'task list');
  expect(listed.data.length, 'the list holds every task of the account').toBeLessThan(1000);
  return listed.data;
}

/**
 * The points invariants of one account (`opening`: what it was funded with, when known); returns its tasks.
 * @see reference "Text billing" 5: interruption by a service fault (a kill) refunds in full
 */
export async function checkLedger(admin: Client, account: Pick<TestAccount, 'id'> & { opening?: string }, acked: Acknowledged): Promise<Listed[]> {
  const where = `account ${account.id}`;
  const [view, ledger, tasks] = await Promise.all([
    admin.get(`/_emulator/accounts/${account.id}`).then((r) => expectStatus<{ available: string; frozen: string; charged: string }>(r, 200, where)),
    admin.get(`/_emulator/accounts/${account.id}/ledger`).then((r) => expectStatus<{ data: LedgerEntry[] }>(r, 200, where).data),
    tasksOf(admin, account.id),
  ]);
  const of = (kind: LedgerEntry['kind'], match: (e: LedgerEntry) => boolean = () => true): LedgerEntry[] =>
    ledger.filter((e) => e.kind === kind && match(e));
  const points = (entries: LedgerEntry[]): string[] => entries.map((e) => e.points);
  for (const e of ledger) {
    expect(e.account_id).toBe(account.id);
    expect(new Big(e.points).gt(0), `${where}: a ledger entry of ${e.points}`).toBe(true);
  }

  const funded = sum(points(of('fund')));
  if (account.opening !== undefined) same(funded, account.opening, `${where}: funded`);
  same(new Big(view.available).plus(view.frozen).plus(view.charged), funded, `${where}: available + frozen + charged = funded`);
  same(sum(points(of('freeze'))).minus(sum(points(of('charge')))).minus(sum(points(of('refund')))), view.frozen, `${where}: frozen`);
  same(sum(points(of('charge'))), view.charged, `${where}: charged`);

  const ids = new Set(tasks.map((t) => t.task.id));
  for (const e of ledger) if (e.task_id !== null) expect(ids.has(e.task_id), `${where}: entry for unknown task ${e.task_id}`).toBe(true);
  let stillFrozen = new Big(0);
  for (const { task } of tasks) {
    const own = (e: LedgerEntry): boolean => e.task_id === task.id;
    const [freezes, charges, refunds] = [of('freeze', own), of('charge', own), of('refund', own)];
    const label = `task ${task.id} (${task.status})`;
    expect(freezes, `${label}: frozen once`).toHaveLength(1);
    same(sum(points(freezes)), task.points.frozen, `${label}: frozen vs its freeze`);
    same(sum(points(charges)), task.points.charged, `${label}: charged vs its charges`);
    same(sum(points(refunds)), task.points.refunded, `${label}: refunded vs its refunds`);
    if (TERMINAL.has(task.status)) {
      same(new Big(task.points.charged).plus(task.points.refunded), task.points.frozen, `${label}: frozen = charged + refunded`);
      expect([charges.length, refunds.length], `${label}: settled once`).toEqual(task.status === 'succeeded' ? [1, 0] : [0, 1]);
    } else {
      expect([charges.length, refunds.length], `${label}: nothing settled`).toEqual([0, 0]);
      stillFrozen = stillFrozen.plus(task.points.frozen);
    }
  }

  // Every text call is settled: an answered one when it ended, one the kill cut off at the next start (a refund).
  for (const call of new Set(ledger.flatMap((e) => (e.call_id ? [e.call_id] : [])))) {
    const own = (e: LedgerEntry): boolean => e.call_id === call;
    const [freezes, charges, refunds] = [of('freeze', own), of('charge', own), of('refund', own)];
    expect(freezes, `text call ${call}: frozen once`).toHaveLength(1);
    expect(charges.length + refunds.length, `text call ${call}${acked.textCalls.has(call) ? ' (answered)' : ' (cut by a kill)'}: settled`).toBeGreaterThanOrEqual(1);
    expect([charges.length, refunds.length].every((n) => n <= 1), `text call ${call}: settled once`).toBe(true);
    same(sum(points(charges)).plus(sum(points(refunds))), sum(points(freezes)), `text call ${call}: frozen = charged + refunded`);
  }
  for (const call of acked.textCalls.keys()) {
    if (acked.textCalls.get(call)?.accountId === account.id) expect(of('freeze', (e) => e.call_id === call), `answered text call ${call}`).toHaveLength(1);
  }
  // Only unfinished tasks hold points.
  same(stillFrozen, view.frozen, `${where}: frozen vs its unfinished tasks`);
  return tasks;
}
