import { inTurns } from '../clock/index.ts';
import { ids } from '../random/index.ts';
import type { StoredAccount } from '../accounts/index.ts';
import type { DeliveryAttempt, DeliveryType, StoredDelivery } from './records.ts';
import { isFaultAttempt } from './records.ts';
import { MAX_AUTOMATIC_ATTEMPTS, nextAttemptMs, RETRY_DELAYS_SECONDS, ROTATION_OVERLAP_MS } from './schedule.ts';
import { PoolClosed } from './send-pool.ts';
import { sendAttempt } from './attempt.ts';
import { heldDeliveries, planDelivery } from './faults.ts';
import type { DeliveryPlan } from './faults.ts';
import { addressedAccount, deliveryOf, newDelivery, notFound } from './messages.ts';
import { attemptOutcomes, settledOnce } from './outcomes.ts';
import { receiverTrials } from './receiver-trials.ts';
import type { SendAttempt, WebhookDeps, Webhooks } from './types.ts';

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

  const attempt: SendAttempt = (delivery, kind, atMs, staleSeconds) => sendAttempt(deps, delivery, kind, atMs, staleSeconds);
  const { record, logAttempt } = attemptOutcomes(deps);
  const trials = receiverTrials(deps, attempt, { logAttempt });
  const held = heldDeliveries();
  // What each delivery's first attempt brings with it (a duplicate, a forged delivery), decided when it was made.
  // Kept in memory, as the rules are: a restart sends the message plainly.
  const extras = new Map<string, NonNullable<DeliveryPlan['extra']>>();

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
    const before = extra === 'forged_signature' ? trials.forge(delivery, dueMs) : Promise.resolve();
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
    const delivery = newDelivery(deps.random, { account, type, url, data, taskId, atMs, nextAttemptMs });
    db.deliveries.put(delivery);
    return delivery;
  }

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
      // Only what was stored before: a delivery made between two pages is scheduled by what made it.
      const upTo = db.deliveries.lastSeq();
      const { epoch } = db.store;
      void inTurns(
        clock,
        () => db.store.epoch === epoch && !db.store.closed,
        (after, limit) => db.deliveries.pendingAfter(after, upTo, limit),
        ({ delivery }) => {
          if (delivery.next_attempt_ms !== null) schedule(delivery.id, delivery.next_attempt_ms);
        },
      );
    },
    resend(deliveryId) {
      const delivery = deliveryOf(db.deliveries, deliveryId);
      // A forged delivery is forged again, a probe stale again: signed correctly, either would be a new message.
      const tried = delivery.attempts[0]?.kind;
      return tried !== undefined && isFaultAttempt(tried) ? manual(delivery, tried, settledOnce) : manual(delivery, 'resend');
    },
    async sendTest(accountId) {
      const delivery = db.store.transaction(() => {
        const account = addressedAccount(db.accounts, accountId);
        return create(account, 'webhook.test', account.webhook_url, {
          message: 'This is a test event from svc-emulator.',
          account_webhook: true,
        }, null, clock.now(), null);
      });
      return manual(delivery, 'manual', (stored) => {
        if (stored.status !== 'delivered') stored.status = 'failed';
      });
    },
    probe: trials.probe,
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
