import type { Store } from '../store/index.ts';
import { bodies, body, pageOf, storedJson, whereOf } from '../store/index.ts';

export type DeliveryType = 'task.succeeded' | 'task.failed' | 'task.canceled' | 'webhook.test';

/** Attempts made to try the receiver (callback faults, the verdict's probe), not to deliver the message. */
export const FAULT_ATTEMPTS = ['duplicate', 'forged_signature', 'stale_timestamp'] as const;
export type FaultAttempt = (typeof FAULT_ATTEMPTS)[number];
export const isFaultAttempt = (kind: DeliveryAttempt['kind']): kind is FaultAttempt => (FAULT_ATTEMPTS as readonly string[]).includes(kind);

/**
 * An attempt: one send of a delivery's message, automatic, a resend or a test event's one send; or one the
 * emulator sent to see what the receiver does with it (`FAULT_ATTEMPTS`).
 */
export interface DeliveryAttempt {
  number: number;
  /**
   * `automatic` (the first send and its retries), `resend` (manual, never retried) or `manual` (a test event);
   * `duplicate` (the message again under its webhook-id), `forged_signature` (a delivery of its own with a wrong
   * signature) or `stale_timestamp` (a probe with an old webhook-timestamp), which never change the delivery's
   * status or its retries.
   */
  kind: 'automatic' | 'resend' | 'manual' | FaultAttempt;
  /** Virtual time of the send. */
  at: string;
  /** The webhook-timestamp header sent (Unix seconds). */
  webhook_timestamp: number;
  /**
   * The webhook-signature header sent. Kept because the secrets behind it rotate and are forgotten; the other
   * headers follow from the delivery and the timestamp. Attempts recorded before it was kept lack it.
   */
  webhook_signature?: string;
  status_code: number | null;
  error: string | null;
  /** Real milliseconds the receiver took. */
  duration_ms: number;
  /** The first 1 KB of the answer. */
  response_excerpt: string;
  ok: boolean;
}

/**
 * A delivery: one callback message (its webhook-id, type and exact body) for one address, with its attempts. One
 * per task reaching a terminal state, retried on failure; the control API lists them at /_emulator/webhooks/deliveries.
 */
export interface StoredDelivery {
  id: string;
  account_id: string;
  task_id: string | null;
  type: DeliveryType;
  url: string;
  /** The exact bytes sent on every attempt. */
  body: string;
  created_at: string;
  /** Virtual ms of creation (the retention counts from it). */
  created_ms: number;
  status: 'pending' | 'delivered' | 'failed';
  /** Virtual time the next automatic attempt falls due, or null when none will. */
  next_attempt_ms: number | null;
  attempts: DeliveryAttempt[];
}

export interface DeliveryFilter {
  taskId?: string;
  accountId?: string;
  status?: StoredDelivery['status'];
}

/** `attention`: pending and failed deliveries first, each group newest first. */
export type DeliveryOrder = 'oldest' | 'newest' | 'attention';

export interface DeliveriesRepo {
  get(id: string): StoredDelivery | undefined;
  put(delivery: StoredDelivery): void;
  /** Deliveries still to be sent with `afterSeq < seq <= upToSeq`, oldest first, at most `limit`, each with its seq. */
  pendingAfter(afterSeq: number, upToSeq: number, limit: number): { seq: number; delivery: StoredDelivery }[];
  /** The seq of the newest delivery stored (0 when none). */
  lastSeq(): number;
  /** Newest first unless `order` says otherwise. */
  list(filter: DeliveryFilter, limit: number, offset: number, order?: DeliveryOrder): { rows: StoredDelivery[]; hasMore: boolean };
  /** Deletes at most `limit` finished deliveries created at or before `beforeMs`; returns how many (one still retrying stays, whatever its age). */
  dropFinished(beforeMs: number, limit: number): number;
}

export function deliveriesRepo(store: Store): DeliveriesRepo {
  const { driver } = store;
  return {
    get: (id) => body<StoredDelivery>(driver.prepare('SELECT body FROM deliveries WHERE id = ?').get(id)),
    put(delivery) {
      driver
        .prepare(
          `INSERT INTO deliveries (id, account_id, task_id, status, created_ms, body) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET status = excluded.status, body = excluded.body`,
        )
        .run(delivery.id, delivery.account_id, delivery.task_id, delivery.status, delivery.created_ms, JSON.stringify(delivery));
    },
    pendingAfter: (afterSeq, upToSeq, limit) =>
      driver
        .prepare("SELECT seq, body FROM deliveries WHERE status = 'pending' AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?")
        .all(afterSeq, upToSeq, limit)
        .map((row) => ({ seq: Number(row[0]), delivery: storedJson<StoredDelivery>(row[1]) })),
    lastSeq: () => Number(driver.prepare('SELECT max(seq) FROM deliveries').get()?.[0] ?? 0),
    list(filter, limit, offset, order = 'newest') {
      const { sql, params } = whereOf([
        ['task_id', filter.taskId],
        ['account_id', filter.accountId],
        ['status', filter.status],
      ]);
      // The page is chosen on the narrow columns first: sorting whole rows would read every delivery's body.
      const done = order === 'attention' ? "status = 'delivered'" : '0';
      const direction = order === 'oldest' ? 'ASC' : 'DESC';
      const rows = driver
        .prepare(
          `SELECT d.body FROM (SELECT seq, ${done} AS done FROM deliveries ${sql} ORDER BY done, seq ${direction} LIMIT ? OFFSET ?) AS p
           JOIN deliveries AS d ON d.seq = p.seq ORDER BY p.done, p.seq ${direction}`,
        )
        .all(...params, limit + 1, offset);
      return pageOf(bodies<StoredDelivery>(rows), limit);
    },
    dropFinished: (beforeMs, limit) =>
      driver
        .prepare("DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE status <> 'pending' AND created_ms <= ? ORDER BY created_ms LIMIT ?)")
        .run(beforeMs, limit).changes,
  };
}
