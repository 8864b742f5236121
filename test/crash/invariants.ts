import { expect } from 'vitest';
import type { Acknowledged, TestAccount } from './acknowledged.ts';
import { expectStatus } from './emulator-process.ts';
import type { Client } from './emulator-process.ts';
import { expectAccountPoints, TERMINAL } from '../support/points.ts';
import type { Balances, PointsEntry } from '../support/points.ts';
import type { WireTask } from '../support/wire-task.ts';

/**
 * The invariants checked after every restart, from the control API: each account's points in exact decimals
 * (funded = available + frozen + charged, funded from its ledger, every task's points its own entries, every
 * finished task frozen = charged + refunded), and where each task may be given what was acknowledged.
 * @see reference "What the service does" (freeze, settle, refund), "States and transitions"
 */

export type Task = Omit<WireTask, 'input' | 'output' | 'metadata'>;

export interface Listed {
  account_id: string;
  scenario: string;
  task: Task;
}

export { TERMINAL };

/** Every task of the account, as the control API lists them (with their scenario). */
export async function tasksOf(admin: Client, accountId: string): Promise<Listed[]> {
  const listed = expectStatus<{ data: Listed[] }>(await admin.get(`/_emulator/tasks?account=${accountId}&limit=1000`), 200, 'task list');
  expect(listed.data.length, 'the list holds every task of the account').toBeLessThan(1000);
  return listed.data;
}

/**
 * The points invariants of one account (test/support/points.ts; `opening`: what it was funded with, when known),
 * plus: a finished task was settled exactly once, and every text call answered before a kill is in the ledger
 * (one the kill cut off is refunded at the next start). Returns its tasks.
 * @see reference "Text billing" 5: interruption by a service fault (a kill) refunds in full
 */
export async function checkLedger(admin: Client, account: Pick<TestAccount, 'id'> & { opening?: string }, acked: Acknowledged): Promise<Listed[]> {
  const where = `account ${account.id}`;
  const [view, ledger, tasks] = await Promise.all([
    admin.get(`/_emulator/accounts/${account.id}`).then((r) => expectStatus<Balances>(r, 200, where)),
    admin.get(`/_emulator/accounts/${account.id}/ledger`).then((r) => expectStatus<{ data: PointsEntry[] }>(r, 200, where).data),
    tasksOf(admin, account.id),
  ]);
  const nameCall = (call: string): string => `text call ${call}${acked.textCalls.has(call) ? ' (answered)' : ' (cut by a kill)'}`;
  const { ofTask, ofCall } = expectAccountPoints(account, view, ledger, tasks.map((listed) => listed.task), nameCall);
  for (const { task } of tasks) {
    if (!TERMINAL.has(task.status)) continue;
    const { charges, refunds } = ofTask(task.id);
    expect([charges.length, refunds.length], `task ${task.id} (${task.status}): settled once`).toEqual(task.status === 'succeeded' ? [1, 0] : [0, 1]);
  }
  for (const [call, answered] of acked.textCalls) {
    if (answered.accountId === account.id) expect(ofCall(call).freezes, `answered text call ${call}`).toHaveLength(1);
  }
  return tasks;
}
