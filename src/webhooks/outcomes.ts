import { isFaultAttempt } from './records.ts';
import type { DeliveryAttempt, StoredDelivery } from './records.ts';
import type { WebhookDeps } from './types.ts';

export interface Outcomes {
  /**
   * Adds an attempt's outcome to the delivery as stored now (a resend may have changed it meanwhile), in one
   * transaction with whatever `then` decides from it. Undefined if a reset took the delivery away.
   */
  record(deliveryId: string, outcome: Omit<DeliveryAttempt, 'number'>, then?: (delivery: StoredDelivery) => void): StoredDelivery | undefined;
  /** The attempt's log line, once it is stored: debug when the receiver took it, info when not. */
  logAttempt(delivery: StoredDelivery, attempt: DeliveryAttempt): void;
}

/** What an attempt's outcome does to its delivery as stored, and the line it logs. */
export function attemptOutcomes({ db, logger }: Pick<WebhookDeps, 'db' | 'logger'>): Outcomes {
  function record(deliveryId: string, outcome: Omit<DeliveryAttempt, 'number'>, then: (delivery: StoredDelivery) => void = () => undefined): StoredDelivery | undefined {
    return db.store.transaction(() => {
      const delivery = db.deliveries.get(deliveryId);
      if (!delivery) return undefined;
      const attempt: DeliveryAttempt = { number: delivery.attempts.length + 1, ...outcome };
      delivery.attempts.push(attempt);
      // An attempt that tried the receiver (a duplicate, a forged delivery's) says nothing of the message's fate.
      if (attempt.ok && !isFaultAttempt(attempt.kind)) {
        delivery.status = 'delivered';
        delivery.next_attempt_ms = null;
      }
      then(delivery);
      db.deliveries.put(delivery);
      db.store.afterCommit(() => logAttempt(delivery, attempt));
      return delivery;
    });
  }

  function logAttempt(delivery: StoredDelivery, attempt: DeliveryAttempt): void {
    const fields = {
      task_id: delivery.task_id,
      account: delivery.account_id,
      message_id: delivery.id,
      attempt: attempt.number,
      kind: attempt.kind,
      ...(attempt.status_code !== null ? { status: attempt.status_code } : { error: attempt.error }),
      duration_ms: attempt.duration_ms,
    };
    if (attempt.ok) logger?.debug(`callback ${delivery.type} delivered`, fields);
    else logger?.info(`callback ${delivery.type} failed`, fields);
  }

  return { record, logAttempt };
}

/** A delivery sent once to try the receiver: delivered if the receiver took its last attempt, else failed. */
export function settledOnce(stored: StoredDelivery): void {
  stored.status = stored.attempts.at(-1)?.ok === true ? 'delivered' : 'failed';
  stored.next_attempt_ms = null;
}
