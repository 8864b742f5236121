import type { FaultRules } from '../faults/index.ts';
import type { ClientLogStore } from '../verdict/index.ts';
import type { Clock } from '../clock/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { AccountsRepo, StoredAccount } from '../accounts/index.ts';
import type { Store } from '../store/index.ts';
import type { Task } from '../contract/index.ts';
import type { DeliveriesRepo, DeliveryAttempt, DeliveryType, StoredDelivery } from './records.ts';
import type { Logger } from '../log/index.ts';
import { MAX_AUTOMATIC_ATTEMPTS, nextAttemptMs, RETRY_DELAYS_SECONDS, ROTATION_OVERLAP_MS } from './schedule.ts';
import { PoolClosed } from './send-pool.ts';
import type { SendPool } from './send-pool.ts';
import type { Send } from './send.ts';
import { activeSecrets, attemptHeaders } from './headers.ts';
import { signatureHeader } from './sign.ts';

/** What a callback needs of a stored task: its account, the submission's callback address and the task object. */
interface FinishedTask {
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
  /** A new secret; the old one keeps signing for 24 clock hours. Inside the caller's transaction. */
  rotate(account: StoredAccount): StoredAccount;
  /** Shutting down: sends still waiting for a slot are not made (they stay due, and go after a restart). */
  stop(): void;
}

const notFound = (deliveryId: string): ApiError => new ApiError('not_found', `No callback message '${deliveryId}'.`);

/** A retry can fall due no sooner than this after an attempt starts: a jump of virtual time waits for it there. */
const FIRST_RETRY_MS = RETRY_DELAYS_SECONDS[0] * 1000;

/**
 * Signed callbacks on the clock: a delivery per terminal task, the first attempt at once and the retries after
 * 1 minute, 5 minutes, 30 minutes, 2 hours and 6 hours from each failure. An attempt is started at its virtual
 * time and runs beside the clock (`clock.track`); its outcome is recorded when the receiver answers or the
 * timeout ends it, so no receiver holds a task transition or another callback. A jump of virtual time stops
 * short of the earliest retry until the attempt has its outcome, so advancing nine hours still replays the
 * whole schedule, each attempt at its own time.
 * @see reference "Events"
 */
export function createWebhooks(deps: WebhookDeps): Webhooks {
  const { clock, db } = deps;

  /**
   * One attempt at a delivery as stored, stamped with the virtual time it fell due at. Called only after the
   * transaction that made the delivery has committed: what it reports is on disk before anyone hears of it.
   * Resolves with the attempt's record, not yet stored.
   */
  async function send(delivery: StoredDelivery, kind: DeliveryAttempt['kind'], atMs: number): Promise<Omit<DeliveryAttempt, 'number'>> {
    const { timestamp, signature, result, durationMs } = await deps.pool.run(async () => {
      // Signed when the slot is free: webhook-timestamp is the time of the send, not of the wait for a slot.
      const account = db.accounts.get(delivery.account_id);
      const timestamp = Math.floor((deps.virtualTimestamps ? atMs : clock.wallNow()) / 1000);
      const signature = signatureHeader(account ? activeSecrets(account, atMs) : [], delivery.id, timestamp, delivery.body);
      const headers = attemptHeaders(delivery.id, timestamp, signature);
      const started = clock.wallNow();
      let result: Pick<DeliveryAttempt, 'status_code' | 'error' | 'response_excerpt'>;
      try {
        const answer = await deps.send({ url: delivery.url, headers, body: delivery.body, timeoutMs: deps.timeoutMs });
        result = { status_code: answer.status, error: null, response_excerpt: answer.excerpt };
      } catch (err) {
        result = { status_code: null, error: (err as Error).message, response_excerpt: '' };
      }
      return { timestamp, signature, result, durationMs: clock.wallNow() - started };
    });
    return {
      kind,
      at: formatTime(atMs),
      webhook_timestamp: timestamp,
      webhook_signature: signature,
      ...result,
      duration_ms: durationMs,
      ok: result.status_code !== null && result.status_code >= 200 && result.status_code < 300,
    };
  }

  /**
   * Adds an attempt's outcome to the delivery as stored now (a resend may have changed it meanwhile), in one
   * transaction with whatever `then` decides from it. Undefined if a reset took the delivery away.
   */
  function record(
    deliveryId: string,
    outcome: Omit<DeliveryAttempt, 'number'>,
    then: (delivery: StoredDelivery) => void = () => undefined,
  ): StoredDelivery | undefined {
    return db.store.transaction(() => {
      const delivery = db.deliveries.get(deliveryId);
      if (!delivery) return undefined;
      const attempt: DeliveryAttempt = { number: delivery.attempts.length + 1, ...outcome };
      delivery.attempts.push(attempt);
      if (attempt.ok) {
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
    if (attempt.ok) deps.logger?.debug(`callback ${delivery.type} delivered`, fields);
    else deps.logger?.info(`callback ${delivery.type} failed`, fields);
  }

  /**
   * An automatic attempt, started now at its due time (a clock job, or once the transaction that ended a task
   * has committed); on failure the next one is scheduled from the time of this failure.
   */
  function automatic(deliveryId: string, dueMs: number): void {
    const delivery = db.deliveries.get(deliveryId);
    if (!delivery || delivery.status !== 'pending') return;
    const outcome = send(delivery, 'automatic', dueMs).then((attempt) =>
      record(deliveryId, attempt, (stored) => {
        // A resend may have succeeded while this attempt was in flight: then nothing is retried, and
        // the failure must not mark a delivered delivery `failed` or give it a next attempt.
        if (attempt.ok || stored.status !== 'pending') return;
        const done = stored.attempts.filter((a) => a.kind === 'automatic').length;
        const next = done < MAX_AUTOMATIC_ATTEMPTS ? nextAttemptMs(done, clock.endOf(dueMs)) : null;
        stored.next_attempt_ms = next;
        if (next === null) stored.status = 'failed';
        else db.store.afterCommit(() => schedule(deliveryId, next));
      }),
    );
    // Refused by a shutdown, the attempt was never made: the delivery stays due, and resumes after a restart.
    clock.track(outcome.catch((err: unknown) => (err instanceof PoolClosed ? undefined : deps.onError(err))), dueMs + FIRST_RETRY_MS);
  }

  // One job per delivery and due time, however often the deliveries are resumed (a start, a state import).
  const scheduled = new Map<string, number>();
  function schedule(deliveryId: string, atMs: number): void {
    if (scheduled.get(deliveryId) === atMs) return;
    scheduled.set(deliveryId, atMs);
    clock.at(atMs, (dueMs) => {
      if (scheduled.get(deliveryId) === atMs) scheduled.delete(deliveryId);
      automatic(deliveryId, dueMs);
    });
  }

  /** A send outside the automatic schedule, awaited by its caller; tracked so a shutdown waits for it. */
  async function manual(delivery: StoredDelivery, kind: 'resend' | 'manual', then?: (stored: StoredDelivery) => void): Promise<StoredDelivery> {
    const sent = send(delivery, kind, clock.now());
    clock.track(sent);
    const stored = record(delivery.id, await sent, then);
    if (!stored) throw notFound(delivery.id);
    return stored;
  }

  /** A new delivery, stored; `nextAttemptMs` is when its first automatic attempt falls due (null: sent by hand). */
  function create(account: StoredAccount, type: DeliveryType, url: string, data: unknown, taskId: string | null, atMs: number, nextAttemptMs: number | null): StoredDelivery {
    const delivery: StoredDelivery = {
      id: ids.deliveryId(deps.random),
      account_id: account.id,
      task_id: taskId,
      type,
      url,
      body: JSON.stringify({ type, timestamp: formatTime(atMs), data }),
      created_at: formatTime(atMs),
      created_ms: atMs,
      status: 'pending',
      next_attempt_ms: nextAttemptMs,
      attempts: [],
    };
    db.deliveries.put(delivery);
    return delivery;
  }

  const deliveryOf = (deliveryId: string): StoredDelivery => {
    const delivery = db.deliveries.get(deliveryId);
    if (!delivery) throw notFound(deliveryId);
    return delivery;
  };

  return {
    taskFinished(stored, atMs) {
      const account = db.accounts.get(stored.account_id);
      const url = stored.webhook_url ?? account?.webhook_url ?? null;
      if (!account || !url) return;
      const type = `task.${stored.task.status}` as DeliveryType;
      const delivery = create(account, type, url, stored.task, stored.task.id, atMs, atMs);
      // Due now: started as soon as the task's end is committed, inside the job or request that ended it (in
      // manual mode nothing would run a job scheduled now outside an advance).
      db.store.afterCommit(() => automatic(delivery.id, atMs));
    },
    resume() {
      for (const delivery of db.deliveries.pending()) {
        if (delivery.next_attempt_ms !== null) schedule(delivery.id, delivery.next_attempt_ms);
      }
    },
    resend: (deliveryId) => manual(deliveryOf(deliveryId), 'resend'),
    async sendTest(accountId) {
      const delivery = db.store.transaction(() => {
        const account = db.accounts.get(accountId);
        if (!account) throw new ApiError('not_found', `No account '${accountId}'.`);
        if (!account.webhook_url) {
          throw new ApiError('invalid_params', 'The account has no default callback address.', [
            { field: 'webhook_url', message: 'the account has none: set it with POST /_emulator/accounts/{id}/webhook' },
          ]);
        }
        return create(account, 'webhook.test', account.webhook_url, {
          message: 'This is a test event from svc-emulator.',
          account_webhook: true,
        }, null, clock.now(), null);
      });
      return manual(delivery, 'manual', (stored) => {
        if (stored.status !== 'delivered') stored.status = 'failed';
      });
    },
    rotate(account) {
      const now = clock.now();
      const rotated: StoredAccount = {
        ...account,
        previous_secrets: [
          ...(account.previous_secrets ?? []).filter((p) => p.until_ms > now),
          { secret: account.webhook_secret, until_ms: now + ROTATION_OVERLAP_MS },
        ],
        webhook_secret: ids.webhookSecret(deps.random),
      };
      db.accounts.put(rotated);
      return rotated;
    },
    stop: () => deps.pool.close(),
  };
}
