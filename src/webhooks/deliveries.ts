import type { Clock } from '../clock/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { DeliveryAttempt, DeliveryType, Store, StoredAccount, StoredDelivery, StoredTask } from '../store/index.ts';
import { entry } from '../store/index.ts';
import { MAX_AUTOMATIC_ATTEMPTS, nextAttemptMs, ROTATION_OVERLAP_MS } from './schedule.ts';
import type { Send } from './send.ts';
import { signatureHeader } from './sign.ts';

export interface WebhookDeps {
  clock: Clock;
  store: Store;
  random: Random;
  send: Send;
  /** Real milliseconds a receiver has to answer (10 s by the reference). */
  timeoutMs: number;
  /** `webhook-timestamp` from the virtual clock instead of the wall clock (for receivers on virtual time). */
  virtualTimestamps: boolean;
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
}

/**
 * Signed callbacks on the clock: a message per terminal task, the first attempt when it falls due and the
 * retries after 1 minute, 5 minutes, 30 minutes, 2 hours and 6 hours from each failure. The HTTP send itself is
 * real; the clock waits for it, so advancing nine hours replays the whole schedule in order.
 * @see reference "Events"
 */
export function createWebhooks(deps: WebhookDeps): Webhooks {
  const { clock, store } = deps;

  function activeSecrets(account: StoredAccount, atMs: number): string[] {
    const previous = (account.previous_secrets ?? []).filter((p) => p.until_ms > atMs).map((p) => p.secret);
    return [account.webhook_secret, ...previous];
  }

  async function attempt(delivery: StoredDelivery, kind: DeliveryAttempt['kind']): Promise<DeliveryAttempt> {
    // What the message reports (the task's end, its points) must be on disk before anyone hears of it: a crash
    // after the send would otherwise run the task again after the restart and call back a second time.
    await store.commit();
    const account = store.data.accounts[delivery.account_id];
    const atMs = clock.now();
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
    const record: DeliveryAttempt = {
      number: delivery.attempts.length + 1,
      kind,
      at: formatTime(atMs),
      webhook_timestamp: timestamp,
      ...result,
      duration_ms: clock.wallNow() - started,
      ok: result.status_code !== null && result.status_code >= 200 && result.status_code < 300,
    };
    delivery.attempts.push(record);
    if (record.ok) {
      delivery.status = 'delivered';
      delivery.next_attempt_ms = null;
    }
    return record;
  }

  /** An automatic attempt: on failure, the next one is scheduled from the time of this failure. */
  async function automatic(messageId: string): Promise<void> {
    const delivery = store.data.deliveries[messageId];
    if (!delivery || delivery.status !== 'pending') return;
    const record = await attempt(delivery, 'automatic');
    // A resend may have delivered the message while this attempt was in flight: then nothing is retried, and the
    // failure must not mark a delivered message `failed` or give it a next attempt.
    if (!record.ok && delivery.status === 'pending') {
      const done = delivery.attempts.filter((a) => a.kind === 'automatic').length;
      const next = done < MAX_AUTOMATIC_ATTEMPTS ? nextAttemptMs(done, clock.now()) : null;
      delivery.next_attempt_ms = next;
      if (next === null) delivery.status = 'failed';
      else schedule(delivery);
    }
    await store.commit();
  }

  function schedule(delivery: StoredDelivery): void {
    if (delivery.next_attempt_ms === null) return;
    const { id } = delivery;
    clock.at(delivery.next_attempt_ms, () => automatic(id));
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
      schedule(delivery);
      // Outside an advance (a cancel through the API) nothing else would run it in manual mode.
      void clock.runDue();
    },
    resume() {
      for (const delivery of Object.values(store.data.deliveries)) {
        if (delivery.status === 'pending') schedule(delivery);
      }
    },
    async resend(messageId) {
      const delivery = deliveryOf(messageId);
      await attempt(delivery, 'resend');
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
      const record = await attempt(delivery, 'manual');
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
  };
}
