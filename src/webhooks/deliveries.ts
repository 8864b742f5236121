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
import { isFaultAttempt } from './records.ts';
import type { DeliveriesRepo, DeliveryAttempt, DeliveryType, FaultAttempt, StoredDelivery } from './records.ts';
import type { Logger } from '../log/index.ts';
import { MAX_AUTOMATIC_ATTEMPTS, nextAttemptMs, RETRY_DELAYS_SECONDS, ROTATION_OVERLAP_MS } from './schedule.ts';
import { PoolClosed } from './send-pool.ts';
import type { SendPool } from './send-pool.ts';
import type { Send } from './send.ts';
import { DEFAULT_STALE_SECONDS, sendAttempt } from './attempt.ts';
import { heldDeliveries, planDelivery } from './faults.ts';
import type { DeliveryPlan } from './faults.ts';

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

/** A delivery sent once to try the receiver: delivered if the receiver took its last attempt, else failed. */
function settledOnce(stored: StoredDelivery): void {
  stored.status = stored.attempts.at(-1)?.ok === true ? 'delivered' : 'failed';
  stored.next_attempt_ms = null;
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

  const attempt = (delivery: StoredDelivery, kind: DeliveryAttempt['kind'], atMs: number, staleSeconds?: number) =>
    sendAttempt(deps, delivery, kind, atMs, staleSeconds);
  const held = heldDeliveries();
  // What each delivery's first attempt brings with it (a duplicate, a forged delivery), decided when it was made.
  // Kept in memory, as the rules are: a restart sends the message plainly.
  const extras = new Map<string, NonNullable<DeliveryPlan['extra']>>();

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
    if (attempt.ok) deps.logger?.debug(`callback ${delivery.type} delivered`, fields);
    else deps.logger?.info(`callback ${delivery.type} failed`, fields);
  }

  /**
   * An automatic attempt, started now at its due time (a clock job, or once the transaction that ended a task
   * has committed); on failure the next one is scheduled from the time of this failure. The first attempt brings
   * what a callback fault added to it: a forged delivery before it, the message again right after it; and once it
   * has its outcome, the deliveries of its account held back for it (`out_of_order`) go.
   */
  function automatic(deliveryId: string, dueMs: number): Promise<void> {
    const delivery = db.deliveries.get(deliveryId);
    held.release(deliveryId);
    if (!delivery || delivery.status !== 'pending') return Promise.resolve();
    const extra = extras.get(deliveryId);
    extras.delete(deliveryId);
    const first = delivery.attempts.every((a) => a.kind !== 'automatic');
    const ticket = first ? held.ticket() : null;
    const before = extra === 'forged_signature' ? forge(delivery, dueMs) : Promise.resolve();
    const outcome = before
      .then(() => attempt(delivery, 'automatic', dueMs))
      .then((sent) =>
        record(deliveryId, sent, (stored) => {
          // A resend may have succeeded while this attempt was in flight: then nothing is retried, and
          // the failure must not mark a delivered delivery `failed` or give it a next attempt.
          if (sent.ok || stored.status !== 'pending') return;
          const done = stored.attempts.filter((a) => a.kind === 'automatic').length;
          const next = done < MAX_AUTOMATIC_ATTEMPTS ? nextAttemptMs(done, clock.endOf(dueMs)) : null;
          stored.next_attempt_ms = next;
          if (next === null) stored.status = 'failed';
          else db.store.afterCommit(() => schedule(deliveryId, next));
        }),
      )
      .then(async () => {
        if (extra === 'duplicate') record(deliveryId, await attempt(delivery, 'duplicate', dueMs));
        // Their holds end here (the jobs at their ends find them no longer scheduled); waited for, so that whatever
        // waits for this attempt (an advance) waits for them too.
        const overtaken = ticket === null ? [] : held.overtakenBy(delivery, ticket);
        for (const id of overtaken) scheduled.delete(id);
        await Promise.all(overtaken.map((id) => automatic(id, clock.now())));
      });
    // Refused by a shutdown, the attempt was never made: the delivery stays due, and resumes after a restart.
    const settled = outcome.catch((err: unknown) => (err instanceof PoolClosed ? undefined : deps.onError(err)));
    clock.track(settled, dueMs + FIRST_RETRY_MS);
    return settled;
  }

  /**
   * A forged delivery of `real`'s message: its own webhook-id, a signature by a secret the account never had, sent
   * once and never retried, listed beside the real one (its task's) with its one `forged_signature` attempt.
   */
  async function forge(real: StoredDelivery, atMs: number): Promise<void> {
    await tryReceiver({ ...real, id: ids.deliveryId(deps.random), attempts: [], next_attempt_ms: null }, 'forged_signature', atMs);
  }

  /**
   * A delivery made to see what the receiver does with it (a forged one, a stale probe): sent once, then stored
   * with its one attempt, so that no such delivery is ever listed without the attempt that says what it is (a
   * resend would otherwise sign it correctly). Not stored if a reset came meanwhile.
   */
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

  // One job per delivery and due time, however often the deliveries are resumed (a start, a state import); a
  // job whose delivery was scheduled again for another time since (an ended hold) does nothing.
  const scheduled = new Map<string, number>();
  function schedule(deliveryId: string, atMs: number): void {
    if (scheduled.get(deliveryId) === atMs) return;
    scheduled.set(deliveryId, atMs);
    clock.at(atMs, (dueMs) => {
      if (scheduled.get(deliveryId) !== atMs) return;
      scheduled.delete(deliveryId);
      void automatic(deliveryId, dueMs);
    });
  }

  /** A send outside the automatic schedule, awaited by its caller; tracked so a shutdown waits for it. */
  async function manual(delivery: StoredDelivery, kind: DeliveryAttempt['kind'], then?: (stored: StoredDelivery) => void): Promise<StoredDelivery> {
    const sent = attempt(delivery, kind, clock.now());
    clock.track(sent);
    const stored = record(delivery.id, await sent, then);
    if (!stored) throw notFound(delivery.id);
    return stored;
  }

  /** A new delivery, stored; `nextAttemptMs` is when its first automatic attempt falls due (null: sent by hand). */
  function create(account: StoredAccount, type: DeliveryType, url: string, data: unknown, taskId: string | null, atMs: number, nextAttemptMs: number | null): StoredDelivery {
    const delivery = made(account, type, url, data, taskId, atMs, nextAttemptMs);
    db.deliveries.put(delivery);
    return delivery;
  }

  const made = (account: StoredAccount, type: DeliveryType, url: string, data: unknown, taskId: string | null, atMs: number, nextAttemptMs: number | null): StoredDelivery => ({
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
  });

  /** The account's default address for an event sent by hand (a test event, a probe), or why there is none. */
  function addressedAccount(accountId: string): StoredAccount & { webhook_url: string } {
    const account = db.accounts.get(accountId);
    if (!account) throw new ApiError('not_found', `No account '${accountId}'.`);
    if (!account.webhook_url) {
      throw new ApiError('invalid_params', 'The account has no default callback address.', [
        { field: 'webhook_url', message: 'the account has none: set it with POST /_emulator/accounts/{id}/webhook' },
      ]);
    }
    return account as StoredAccount & { webhook_url: string };
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
      const plan = planDelivery(deps.faults, { event: type, account: account.id }, atMs);
      const delivery = create(account, type, url, stored.task, stored.task.id, atMs, plan.firstDueMs);
      db.store.afterCommit(() => {
        if (plan.extra) extras.set(delivery.id, plan.extra);
        if (plan.held) held.hold(delivery);
        // Due now: started as soon as the task's end is committed, inside the job or request that ended it (in
        // manual mode nothing would run a job scheduled now outside an advance).
        if (plan.firstDueMs === atMs) void automatic(delivery.id, atMs);
        else schedule(delivery.id, plan.firstDueMs);
      });
    },
    resume() {
      // What was decided for deliveries made before (held, or with an extra) belongs to what was replaced.
      held.clear();
      extras.clear();
      for (const delivery of db.deliveries.pending()) {
        if (delivery.next_attempt_ms !== null) schedule(delivery.id, delivery.next_attempt_ms);
      }
    },
    resend(deliveryId) {
      const delivery = deliveryOf(deliveryId);
      // A forged delivery is forged again, a probe stale again: signed correctly, either would be a new message.
      const tried = delivery.attempts[0]?.kind;
      return tried !== undefined && isFaultAttempt(tried) ? manual(delivery, tried, settledOnce) : manual(delivery, 'resend');
    },
    async sendTest(accountId) {
      const delivery = db.store.transaction(() => {
        const account = addressedAccount(accountId);
        return create(account, 'webhook.test', account.webhook_url, {
          message: 'This is a test event from svc-emulator.',
          account_webhook: true,
        }, null, clock.now(), null);
      });
      return manual(delivery, 'manual', (stored) => {
        if (stored.status !== 'delivered') stored.status = 'failed';
      });
    },
    probe(accountId, staleSeconds = DEFAULT_STALE_SECONDS) {
      const account = addressedAccount(accountId);
      const now = clock.now();
      const probe = made(account, 'webhook.test', account.webhook_url, {
        message: `This is a probe from svc-emulator: its webhook-timestamp is ${staleSeconds} seconds old, so a receiver should turn it away.`,
        account_webhook: true,
      }, null, now, null);
      return tryReceiver(probe, 'stale_timestamp', now, staleSeconds);
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
