import type { FaultRules } from '../faults/index.ts';
import type { StoredDelivery } from './records.ts';

/**
 * Virtual milliseconds an `out_of_order` callback waits at most for a later callback of its account to go first:
 * as long as the first retry's wait, so a held message is never later than one whose first attempt failed.
 * Emulator-defined: the reference promises no order, and says nothing of how late a callback may be.
 */
export const OUT_OF_ORDER_HOLD_MS = 60_000;

/** What a callback fault makes of a new delivery: when its first attempt falls due, and what goes with it. */
export interface DeliveryPlan {
  /** Virtual time of the first automatic attempt. */
  firstDueMs: number;
  /** Held for a later callback of the account (`out_of_order`): its first attempt waits for that one's. */
  held: boolean;
  /** Sent with the first attempt: the message again after it, or a forged delivery before it. */
  extra: 'duplicate' | 'forged_signature' | null;
}

/**
 * Asks the rule set once per task callback, when its delivery is made; nothing is asked while no rule is loaded.
 * @see src/faults/types.ts CallbackFault
 */
export function planDelivery(faults: FaultRules, facts: { event: string; account: string }, atMs: number): DeliveryPlan {
  const plain: DeliveryPlan = { firstDueMs: atMs, held: false, extra: null };
  if (faults.empty) return plain;
  const fault = faults.forCallback(facts)?.fault;
  switch (fault?.kind) {
    case 'delay':
      return { ...plain, firstDueMs: atMs + fault.seconds * 1000 };
    case 'out_of_order':
      return { ...plain, firstDueMs: atMs + OUT_OF_ORDER_HOLD_MS, held: true };
    case 'duplicate':
    case 'forged_signature':
      return { ...plain, extra: fault.kind };
    default:
      return plain;
  }
}

/**
 * Deliveries held back by `out_of_order`, by account. One is let go once a delivery of its account whose first
 * attempt started after it was held has that attempt's outcome (the receiver has answered that one, so the order
 * it sees is certain), or at the end of its hold, which is its stored due time (a restart resumes it there, like
 * any pending delivery). Order is counted, not timed: on a manual clock two tasks end at the same virtual time.
 */
export interface HeldDeliveries {
  hold(delivery: Pick<StoredDelivery, 'id' | 'account_id'>): void;
  /** Ends a hold (its time came); true if it was held. */
  release(deliveryId: string): boolean;
  /** A first attempt starts: its ticket says which holds it comes after. */
  ticket(): number;
  /** The held deliveries the first attempt of `sent` (with its ticket) overtook, no longer held: they go now. */
  overtakenBy(sent: Pick<StoredDelivery, 'id' | 'account_id'>, ticket: number): string[];
  clear(): void;
}

export function heldDeliveries(): HeldDeliveries {
  const held = new Map<string, { account: string; order: number }>();
  let order = 0;
  return {
    hold: (delivery) => void held.set(delivery.id, { account: delivery.account_id, order: order++ }),
    release: (deliveryId) => held.delete(deliveryId),
    ticket: () => order++,
    overtakenBy(sent, ticket) {
      if (held.size === 0) return [];
      const overtaken = [...held].filter(([id, h]) => id !== sent.id && h.account === sent.account_id && h.order < ticket).map(([id]) => id);
      for (const id of overtaken) held.delete(id);
      return overtaken;
    },
    clear: () => held.clear(),
  };
}
