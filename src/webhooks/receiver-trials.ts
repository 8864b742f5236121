import { ids } from '../random/index.ts';
import { DEFAULT_STALE_SECONDS } from './attempt.ts';
import { addressedAccount, newDelivery } from './messages.ts';
import { settledOnce } from './outcomes.ts';
import type { Outcomes } from './outcomes.ts';
import type { DeliveryAttempt, FaultAttempt, StoredDelivery } from './records.ts';
import type { SendAttempt, WebhookDeps } from './types.ts';

export interface ReceiverTrials {
  /**
   * A forged delivery of `real`'s message: its own webhook-id, a signature by a secret the account never had, sent
   * once and never retried, listed beside the real one (its task's) with its one `forged_signature` attempt.
   */
  forge(real: StoredDelivery, atMs: number): Promise<void>;
  /** The stale-timestamp probe of the account's default address (`Webhooks.probe`). */
  probe(accountId: string, staleSeconds?: number): Promise<StoredDelivery>;
}

/**
 * Deliveries made to see what the receiver does with them (a forged one, a stale probe): each sent once, then
 * stored with its one attempt, so that no such delivery is ever listed without the attempt that says what it is (a
 * resend would otherwise sign it correctly). Not stored if a reset came meanwhile.
 */
export function receiverTrials(deps: Pick<WebhookDeps, 'clock' | 'db' | 'random'>, attempt: SendAttempt, { logAttempt }: Pick<Outcomes, 'logAttempt'>): ReceiverTrials {
  const { clock, db } = deps;

  async function tryReceiver(delivery: StoredDelivery, kind: FaultAttempt, atMs: number, staleSeconds?: number): Promise<StoredDelivery> {
    const epoch = db.store.epoch;
    const sent = attempt(delivery, kind, atMs, staleSeconds);
    clock.track(sent);
    const outcome = await sent;
    const stored: StoredDelivery = { ...delivery, attempts: [{ number: 1, ...outcome }], next_attempt_ms: null };
    settledOnce(stored);
    if (db.store.closed || db.store.epoch !== epoch) return stored;
    db.store.transaction(() => {
      db.deliveries.put(stored);
      db.store.afterCommit(() => logAttempt(stored, stored.attempts[0] as DeliveryAttempt));
    });
    return stored;
  }

  return {
    async forge(real, atMs) {
      await tryReceiver({ ...real, id: ids.deliveryId(deps.random), attempts: [], next_attempt_ms: null }, 'forged_signature', atMs);
    },
    probe(accountId, staleSeconds = DEFAULT_STALE_SECONDS) {
      const account = addressedAccount(db.accounts, accountId);
      const now = clock.now();
      const probe = newDelivery(deps.random, {
        account,
        type: 'webhook.test',
        url: account.webhook_url,
        data: {
          message: `This is a probe from svc-emulator: its webhook-timestamp is ${staleSeconds} seconds old, so a receiver should turn it away.`,
          account_webhook: true,
        },
        taskId: null,
        atMs: now,
        nextAttemptMs: null,
      });
      return tryReceiver(probe, 'stale_timestamp', now, staleSeconds);
    },
  };
}
