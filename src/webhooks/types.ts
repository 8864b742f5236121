import type { FaultRules } from '../faults/index.ts';
import type { ClientLogStore } from '../verdict/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Random } from '../random/index.ts';
import type { AccountsRepo, StoredAccount } from '../accounts/index.ts';
import type { Store } from '../store/index.ts';
import type { Task } from '../contract/index.ts';
import type { Logger } from '../log/index.ts';
import type { DeliveriesRepo, DeliveryAttempt, StoredDelivery } from './records.ts';
import type { SendPool } from './send-pool.ts';
import type { Send } from './send.ts';

// What the callbacks take and give (deliveries.ts builds them): the webhooks folder's public types.

/** What a callback needs of a stored task: its account, the submission's callback address and the task object. */
export interface FinishedTask {
  account_id: string;
  webhook_url?: string | null;
  task: Task;
}

export interface WebhookDeps {
  clock: Clock;
  db: { store: Store; accounts: AccountsRepo; deliveries: DeliveriesRepo };
  random: Random;
  send: Send;
  /** Sends at once at most; the rest wait for a slot, without holding the clock. */
  pool: SendPool;
  /** Real milliseconds a receiver has to answer (10 s by the reference). */
  timeoutMs: number;
  /** `webhook-timestamp` from the virtual clock instead of the wall clock (for receivers on virtual time). */
  virtualTimestamps: boolean;
  logger: Logger | null;
  /** Where an attempt that could not even be recorded (the store closed under it) is reported. */
  onError: (err: unknown) => void;
  /** Callback faults in force (`duplicate`, `delay`, `out_of_order`, `forged_signature`). */
  faults: FaultRules;
  /** Where each receiver's answer is noted for the verdict. */
  clientLog: ClientLogStore;
}

export interface Webhooks {
  /**
   * The engine's terminal listener: one callback per task submitted through the API. The delivery is written in
   * the transaction that ended the task; its first attempt starts once that has committed.
   */
  taskFinished(stored: FinishedTask, atMs: number): void;
  /** Schedules every pending delivery again (after a start or restart). */
  resume(): void;
  /** Sends a delivery again at once, same webhook-id, never retried. */
  resend(deliveryId: string): Promise<StoredDelivery>;
  /** Sends a `webhook.test` event to the account's default address at once. */
  sendTest(accountId: string): Promise<StoredDelivery>;
  /**
   * Sends the account's default address a correctly signed `webhook.test` event whose webhook-timestamp is
   * `staleSeconds` old, once: a receiver that checks timestamps turns it away. Stored with its one attempt.
   */
  probe(accountId: string, staleSeconds?: number): Promise<StoredDelivery>;
  /** A new secret; the old one keeps signing for 24 clock hours. Inside the caller's transaction. */
  rotate(account: StoredAccount): StoredAccount;
  /** Shutting down: sends still waiting for a slot are not made (they stay due, and go after a restart). */
  stop(): void;
}

/** One attempt at a delivery, bound to the deps (attempt.ts's `sendAttempt`): its outcome, not yet stored. */
export type SendAttempt = (
  delivery: StoredDelivery,
  kind: DeliveryAttempt['kind'],
  atMs: number,
  staleSeconds?: number,
) => Promise<Omit<DeliveryAttempt, 'number'>>;
