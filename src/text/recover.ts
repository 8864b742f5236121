import { add, cmp, sub, ZERO } from '../billing/index.ts';
import type { Points } from '../billing/index.ts';
import { move } from '../accounts/index.ts';
import type { Store } from '../store/index.ts';

/**
 * Refunds text calls a stopped process left frozen. A call freezes (and commits) before it generates and settles
 * when its answer ends; a process killed in between leaves the freeze with nothing to settle it, since no call
 * outlives its process. Such a call was interrupted by a fault of the service, which refunds in full.
 * @see reference "Text billing" 5: failure before output or interruption by a service fault: full refund
 * @returns the request ids of the calls refunded
 */
export function refundInterruptedTextCalls(store: Store, nowMs: number): string[] {
  const open = new Map<string, { accountId: string; left: Points }>();
  // Only the ledger written since the last start: calls of earlier runs were settled or refunded by then, and
  // no call spans a start. The plain ledger: a read, not a change.
  const ledger = store.peek().ledger;
  const from = Math.min(store.peek().ledger_checked ?? 0, ledger.length);
  for (let i = from; i < ledger.length; i += 1) {
    const entry = ledger[i];
    if (!entry) continue;
    if (!entry.call_id) continue;
    const call = open.get(entry.call_id) ?? { accountId: entry.account_id, left: ZERO };
    call.left = entry.kind === 'freeze' ? add(call.left, entry.points) : sub(call.left, entry.points);
    open.set(entry.call_id, call);
  }
  const refunded: string[] = [];
  for (const [callId, call] of open) {
    if (cmp(call.left, ZERO) <= 0 || !Object.hasOwn(store.peek().accounts, call.accountId)) continue;
    move(store.data, call.accountId, { kind: 'refund', points: call.left, callId, atMs: nowMs });
    refunded.push(callId);
  }
  store.data.ledger_checked = store.peek().ledger.length;
  return refunded;
}
