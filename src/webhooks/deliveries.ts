import type { Clock } from '../clock/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { DeliveryAttempt, DeliveryType, Store, StoredAccount, StoredDelivery, StoredTask } from '../store/index.ts';
import { entry } from '../store/index.ts';
import type { Logger } from '../log/index.ts';
import { MAX_AUTOMATIC_ATTEMPTS, nextAttemptMs, RETRY_DELAYS_SECONDS, ROTATION_OVERLAP_MS } from './schedule.ts';
import { PoolClosed } from './send-pool.ts';
import type { SendPool } from './send-pool.ts';
import type { Send } from './send.ts';
import { signatureHeader } from './sign.ts';

export interface WebhookDeps {
  clock: Clock;
  store: Store;
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
}

export interface Webhooks {
  /** The engine's terminal listener: one callback per task submitted through the API. */
  taskFinished(stored: StoredTask, atMs: number): void;
  /** Schedules every pending delivery again (after a start or restart). */
  resume(): void;
  /** Sends a message again at once, same webhook-id, never retried. */
  resend(messageId: string): Promise<StoredDelivery>;
  /** Sends a `webhook.test` event to the account's default address at once. */
  sendTest(account: StoredAccount): Promise<StoredDelivery>;
  /** A new secret; the old one keeps signing for 24 clock hours. */
  rotate(account: StoredAccount): void;
  /** Shutting down: sends still waiting for a slot are not made (they stay due, and go after a restart). */
  stop(): void;
}

/** A retry can fall due no sooner than this after an attempt starts: a jump of virtual time waits for it there. */
const FIRST_RETRY_MS = RETRY_DELAYS_SECONDS[0] * 1000;

/**
 * Signed callbacks on the clock: a message per terminal task, the first attempt at once and the retries after
 * 1 minute, 5 minutes, 30 minutes, 2 hours and 6 hours from each failure. An attempt is started at its virtual
 * time and runs beside the clock (`clock.track`); its outcome is recorded when the receiver answers or the
 * timeout ends it, so no receiver holds a task transition or another callback. A jump of virtual time stops
 * short of the earliest retry until the attempt has its outcome, so advancing nine hours still replays the
 * whole schedule, each attempt at its own time.
 * @see reference "Events"
 */
export function createWebhooks(deps: WebhookDeps): Webhooks {
  const { clock, store } = deps;

  function activeSecrets(account: StoredAccount, atMs: number): string[] {
    const previous = (account.previous_secrets ?? []).filter((p) => p.until_ms > atMs).map((p) => p.secret);
    return [account.webhook_secret, ...previous];
  }

  /** One send, stamped with the virtual time it fell due at; the record is added to the message. */
  async function attempt(delivery: StoredDelivery, kind: DeliveryAttempt['kind'], atMs: number): Promise<DeliveryAttempt> {
    // What the message reports (the task's end, its points) must be on disk before anyone hears of it: a crash
    // after the send would otherwise run the task again after the restart and call back a second time.
    await store.commit();
    const { timestamp, result, durationMs } = await deps.pool.run(async () => {
      // Signed when the slot is free: webhook-timestamp is the time of the send, not of the wait for a slot.
      const account = store.data.accounts[delivery.account_id];
      const timestamp = Math.floor((deps.virtualTimestamps ? atMs : clock.wallNow()) / 1000);
      const headers = {
        'Content-Type': 'application/json',
        'User-Agent': 'Svc-Webhook/1.0',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(account ? activeSecrets(account, atMs) : [], delivery.id, timestamp, delivery.body),
      };
      const started = clock.wallNow();
      let result: Pick<DeliveryAttempt, 'status_code' | 'error' | 'response_excerpt'>;
      try {
        const answer = await deps.send({ url: delivery.url, headers, body: delivery.body, timeoutMs: deps.timeoutMs });
        result = { status_code: answer.status, error: null, response_excerpt: answer.excerpt };
      } catch (err) {
        result = { status_code: null, error: (err as Error).message, response_excerpt: '' };
      }
      return { timestamp, result, durationMs: clock.wallNow() - started };
    });
    const record: DeliveryAttempt = {
      number: delivery.attempts.length + 1,
      kind,
      at: formatTime(atMs),
      webhook_timestamp: timestamp,
      ...result,
      duration_ms: durationMs,
      ok: result.status_code !== null && result.status_code >= 200 && result.status_code < 300,
    };
    delivery.attempts.push(record);
    if (record.ok) {
      delivery.status = 'delivered';
      delivery.next_attempt_ms = null;
    }
    logAttempt(delivery, record);
    return record;
  }

  function logAttempt(delivery: StoredDelivery, record: DeliveryAttempt): void {
    const fields = {
      task_id: delivery.task_id,
      account: delivery.account_id,
      message_id: delivery.id,
      attempt: record.number,
      kind: record.kind,
      ...(record.status_code !== null ? { status: record.status_code } : { error: record.error }),
      duration_ms: record.duration_ms,
    };
    if (record.ok) deps.logger?.debug(`callback ${delivery.type} delivered`, fields);
    else deps.logger?.info(`callback ${delivery.type} failed`, fields);
  }

  /**
   * An automatic attempt, started now at its due time (a clock job, or at once when a task ends); on failure the
   * next one is scheduled from the time of this failure.
   */
  function automatic(messageId: string, dueMs: number): void {
    const delivery = store.data.deliveries[messageId];
    if (!delivery || delivery.status !== 'pending') return;
    const outcome = attempt(delivery, 'automatic', dueMs).then(async (record) => {
      // A resend may have delivered the message while this attempt was in flight: then nothing is retried, and
      // the failure must not mark a delivered message `failed` or give it a next attempt.
      if (!record.ok && delivery.status === 'pending') {
        const done = delivery.attempts.filter((a) => a.kind === 'automatic').length;
        const next = done < MAX_AUTOMATIC_ATTEMPTS ? nextAttemptMs(done, clock.endOf(dueMs)) : null;
        delivery.next_attempt_ms = next;
        if (next === null) delivery.status = 'failed';
        else schedule(delivery);
      }
      await store.commit();
    });
    // Refused by a shutdown, the attempt was never made: the message stays due, and resumes after a restart.
    clock.track(outcome.catch((err: unknown) => (err instanceof PoolClosed ? undefined : deps.onError(err))), dueMs + FIRST_RETRY_MS);
  }

  function schedule(delivery: StoredDelivery): void {
    if (delivery.next_attempt_ms === null) return;
    const { id } = delivery;
    clock.at(delivery.next_attempt_ms, (dueMs) => automatic(id, dueMs));
  }

  /** A send outside the automatic schedule, awaited by its caller; tracked so a shutdown waits for it. */
  function manual(delivery: StoredDelivery, kind: 'resend' | 'manual'): Promise<DeliveryAttempt> {
    const sent = attempt(delivery, kind, clock.now());
    clock.track(sent);
    return sent;
  }

  function create(account: StoredAccount, type: DeliveryType, url: string, data: unknown, taskId: string | null, atMs: number): StoredDelivery {
    const delivery: StoredDelivery = {
      id: ids.messageId(deps.random),
      account_id: account.id,
      task_id: taskId,
      type,
      url,
      body: JSON.stringify({ type, timestamp: formatTime(atMs), data }),
      created_at: formatTime(atMs),
      status: 'pending',
      next_attempt_ms: null,
      attempts: [],
    };
    store.data.deliveries[delivery.id] = delivery;
    // The stored one, not `delivery`: attempts are added to it after an await, and only changes made through the
    // store are journaled (see store/changes.ts).
    return store.data.deliveries[delivery.id] as StoredDelivery;
  }

  const deliveryOf = (messageId: string): StoredDelivery => {
    const delivery = entry(store.data.deliveries, messageId);
    if (!delivery) throw new ApiError('not_found', `No callback message '${messageId}'.`);
    return delivery;
  };

  return {
    taskFinished(stored, atMs) {
      const account = store.data.accounts[stored.account_id];
      const url = stored.webhook_url ?? account?.webhook_url ?? null;
      if (!account || !url) return;
      const type = `task.${stored.task.status}` as DeliveryType;
      const delivery = create(account, type, url, stored.task, stored.task.id, atMs);
      delivery.next_attempt_ms = atMs;
      // Due now: started at once, inside the job or request that ended the task (in manual mode nothing would
      // run a job scheduled now outside an advance).
      automatic(delivery.id, atMs);
    },
    resume() {
      for (const delivery of Object.values(store.data.deliveries)) {
        if (delivery.status === 'pending') schedule(delivery);
      }
    },
    async resend(messageId) {
      const delivery = deliveryOf(messageId);
      await manual(delivery, 'resend');
      await store.commit();
      return delivery;
    },
    async sendTest(account) {
      if (!account.webhook_url) {
        throw new ApiError('invalid_params', 'The account has no default callback address.', [
          { field: 'webhook_url', message: 'the account has none: set it with POST /_emulator/accounts/{id}/webhook' },
        ]);
      }
      const delivery = create(account, 'webhook.test', account.webhook_url, {
        message: 'This is a test event from svc-emulator.',
        account_webhook: true,
      }, null, clock.now());
      const record = await manual(delivery, 'manual');
      if (!record.ok) delivery.status = 'failed';
      await store.commit();
      return delivery;
    },
    rotate(account) {
      const now = clock.now();
      account.previous_secrets = [
        ...(account.previous_secrets ?? []).filter((p) => p.until_ms > now),
        { secret: account.webhook_secret, until_ms: now + ROTATION_OVERLAP_MS },
      ];
      account.webhook_secret = ids.webhookSecret(deps.random);
    },
    stop: () => deps.pool.close(),
  };
}
