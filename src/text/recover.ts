import { add, cmp, sub, ZERO } from '../points/index.ts';
import type { LedgerRepo } from '../billing/index.ts';
import type { Points } from '../points/index.ts';
import { move } from '../accounts/index.ts';
import type { AccountsRepo } from '../accounts/index.ts';
import type { Store } from '../store/index.ts';

const BATCH = 10_000;

/**
 * Refunds text calls a stopped process left frozen. A call freezes (and commits) before it generates and settles
 * when its answer ends; a process killed in between leaves the freeze with nothing to settle it, since no call
 * outlives its process. Such a call was interrupted by a fault of the service, which refunds in full.
 * @see reference "Text billing" 5: failure before output or interruption by a service fault: full refund
 * @returns the request ids of the calls refunded
 */
export function refundInterruptedTextCalls(db: { store: Store; accounts: AccountsRepo; ledger: LedgerRepo }, nowMs: number): string[] {
  return db.store.transaction(() => {
    const open = new Map<string, { accountId: string; left: Points }>();
    // Only the ledger written since the last start: calls of earlier runs were settled or refunded by then, and
    // no call spans a start.
    let from = db.store.meta.get<number>('ledger_checked') ?? 0;
    for (let entries = db.ledger.after(from, BATCH); entries.length > 0; entries = db.ledger.after(from, BATCH)) {
      for (const entry of entries) {
        from = entry.id;
        if (!entry.call_id) continue;
        const call = open.get(entry.call_id) ?? { accountId: entry.account_id, left: ZERO };
        call.left = entry.kind === 'freeze' ? add(call.left, entry.points) : sub(call.left, entry.points);
        open.set(entry.call_id, call);
      }
    }
    const refunded: string[] = [];
    for (const [callId, call] of open) {
      if (cmp(call.left, ZERO) <= 0 || !db.accounts.get(call.accountId)) continue;
      move(db, call.accountId, { kind: 'refund', points: call.left, callId, atMs: nowMs });
      refunded.push(callId);
    }
    db.store.meta.set('ledger_checked', db.ledger.lastId());
    return refunded;
  });
}
