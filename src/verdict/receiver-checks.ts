import { result } from './requests.ts';
import type { Check, CheckResult, DeliveryKind, VerdictLimits } from './types.ts';

// The rules of a callback receiver, one checker with two feeders: the verdict feeds it what receivers answered the
// emulator's deliveries (the client log), `svc-emulator receiver-check` what a receiver answered its own battery.
// A rule knows nothing of who sent: it judges answers, each tagged with the kind of delivery it answered.

/**
 * What a delivery was sent to find out. The emulator sends the first four (a task's callback, a callback fault's
 * duplicate or forged delivery, the stale-timestamp probe); receiver-check sends all of them.
 */
export type ReceiverKind =
  | DeliveryKind
  | 'out_of_order'
  | 'rotation'
  | 'slow_body'
  | 'at_limits'
  | 'other_bytes'
  | 'missing_header'
  | 'unknown_version'
  | 'truncated_body'
  | 'foreign_secret';

/** One answer to one delivery; the client log's `ReceiverAnswer` is one. */
export interface ReceiverDelivery {
  webhookId: string;
  kind: ReceiverKind;
  /** The receiver's status, or what happened instead. */
  outcome: number | 'timeout' | 'unreachable';
  /** Real milliseconds from the request's last byte to the status line. */
  elapsedMs: number;
  /** What exactly was sent, for a failure's reason (`webhook-timestamp 10 minutes ahead`); none from the emulator. */
  sent?: string;
}

/** What the receiver's own test hook said it did with a task whose message came twice. */
export interface ReceiverEffect {
  taskId: string;
  webhookId: string;
  /** How many times it acted on the task, or null when the hook gave no count (`detail` says why). */
  acted: number | null;
  detail: string | null;
}

export interface ReceiverHistory {
  answers: readonly ReceiverDelivery[];
  /** Only when the receiver has an effects hook (receiver-check's --effects-url). */
  effects?: readonly ReceiverEffect[];
}

export interface ReceiverRule {
  id: string;
  /** What a careful receiver does, and why. */
  holds: string;
  /** The deliveries it judges: a run that sends none of them cannot exercise it. */
  kinds: readonly ReceiverKind[];
  judge(history: ReceiverHistory, limits: Pick<VerdictLimits, 'callbackTimeoutMs'>): CheckResult;
}

type Failure = { reason: string; evidence: string[] };

/** The deliveries a receiver must acknowledge with a 2xx in time; the rest it must turn away. */
export const ACKNOWLEDGED_KINDS: readonly ReceiverKind[] = ['message', 'duplicate', 'out_of_order', 'rotation', 'slow_body', 'at_limits'];

const accepted = (a: ReceiverDelivery): boolean => typeof a.outcome === 'number' && a.outcome >= 200 && a.outcome <= 299;
const answered = (a: ReceiverDelivery): string =>
  typeof a.outcome === 'number' ? `answered ${a.outcome}` : a.outcome === 'timeout' ? 'did not answer in time' : 'could not be reached';

const DESCRIBED: Record<ReceiverKind, string> = {
  message: 'callback',
  duplicate: 'the duplicate of callback',
  forged_signature: 'the forged delivery',
  stale_timestamp: 'the stale probe',
  out_of_order: 'the out-of-order callback',
  rotation: 'the callback signed twice (key rotation)',
  slow_body: 'the slowly sent callback',
  at_limits: 'the callback at the documented limits',
  other_bytes: 'the delivery signed over other bytes',
  missing_header: 'the delivery missing a header',
  unknown_version: 'the delivery with an unknown signature version',
  truncated_body: 'the delivery with a cut body',
  foreign_secret: "the delivery signed only with secrets not the account's",
};
/** `the forged delivery msg_x (signed with a secret not the account's)`. */
const named = (d: ReceiverDelivery): string => `${DESCRIBED[d.kind]} ${d.webhookId}${d.sent ? ` (${d.sent})` : ''}`;
const failure = (d: ReceiverDelivery, what: string): Failure => ({ reason: `the receiver ${what} to ${named(d)}`, evidence: [d.webhookId] });

/**
 * The one rule that judges time: every delivery to be acknowledged is answered within the timeout, and a callback
 * with a 2xx. The other acknowledgement rules judge only the status, so a receiver too slow for all of them fails
 * this rule alone.
 */
const acknowledges: ReceiverRule = {
  id: 'receiver.acknowledges',
  holds: 'The callback receiver answers every callback with a 2xx within the timeout (10 s by the reference); anything else makes the service retry.',
  kinds: ACKNOWLEDGED_KINDS,
  judge({ answers }, limits) {
    const due = answers.filter((a) => ACKNOWLEDGED_KINDS.includes(a.kind));
    const failures = due.flatMap((d): Failure[] => {
      const late = d.outcome === 'timeout' || (typeof d.outcome === 'number' && d.elapsedMs > limits.callbackTimeoutMs);
      if (late) return [failure(d, typeof d.outcome === 'number' ? `answered ${d.outcome} after ${d.elapsedMs} ms` : answered(d))];
      if (d.kind === 'message' && !accepted(d)) return [failure(d, answered(d))];
      return [];
    });
    return result(this.id, failures, due.length > 0, 'no callback was delivered');
  },
};

/**
 * A kind of delivery that must be acknowledged: its status judged, its time left to `receiver.acknowledges`, so an
 * answer that never came within the timeout says nothing here.
 */
function acknowledgedRule(id: string, kind: ReceiverKind, holds: string, missing: string): ReceiverRule {
  return {
    id,
    holds,
    kinds: [kind],
    judge({ answers }, limits) {
      const sent = answers.filter((a) => a.kind === kind);
      const judged = sent.filter((a) => a.outcome !== 'timeout');
      const failures = judged.filter((d) => !accepted(d)).map((d) => failure(d, answered(d)));
      const untimely = `no answer came within ${limits.callbackTimeoutMs} ms to ${sent.length === 1 ? 'the one delivery' : `any of the ${sent.length} deliveries`} it judges, so whether they are acknowledged is unknown (receiver.acknowledges judges the time)`;
      return result(id, failures, judged.length > 0, sent.length > 0 ? untimely : missing);
    },
  };
}

/**
 * A kind of delivery that must be turned away with a non-2xx status. A receiver that times out or is down turned
 * nothing away: it never judged the message.
 */
function refusedRule(id: string, kind: ReceiverKind, holds: string, missing: string): ReceiverRule {
  return {
    id,
    holds,
    kinds: [kind],
    judge({ answers }) {
      const sent = answers.filter((a) => a.kind === kind);
      const failures = sent.filter((d) => accepted(d) || typeof d.outcome !== 'number').map((d) => failure(d, answered(d)));
      return result(id, failures, sent.length > 0, missing);
    },
  };
}

const actsOnce: ReceiverRule = {
  id: 'receiver.acts-once',
  holds:
    "A message that arrives twice under one webhook-id is acted on once, as the receiver's own effects hook reports: a retry must not ship an order twice.",
  kinds: ['duplicate'],
  judge({ effects = [] }) {
    const failures = effects.flatMap((e): Failure[] => {
      if (e.acted === null) return [{ reason: `the effects hook gave no count for task ${e.taskId} (${e.detail ?? 'no answer'})`, evidence: [e.webhookId] }];
      if (e.acted !== 1) return [{ reason: `task ${e.taskId} was acted on ${e.acted} times for message ${e.webhookId}, delivered twice`, evidence: [e.webhookId] }];
      return [];
    });
    return result(this.id, failures, effects.length > 0, 'no effects hook was given (receiver-check --effects-url)');
  },
};

/** Every receiver rule, in the order a report lists them. @see reference "Events" → Task callbacks, Delivery */
export const RECEIVER_RULES: readonly ReceiverRule[] = [
  acknowledges,
  acknowledgedRule(
    'receiver.acknowledges-duplicate',
    'duplicate',
    'A message delivered again under the same webhook-id is acknowledged with a 2xx (and handled once): callbacks may arrive more than once.',
    'no duplicate was delivered (a duplicate callback fault sends one)',
  ),
  acknowledgedRule(
    'receiver.acknowledges-out-of-order',
    'out_of_order',
    "Callbacks of two tasks arriving in the other order than the tasks ended are both acknowledged: the reference promises no order.",
    'no callbacks were sent out of order',
  ),
  acknowledgedRule(
    'receiver.acknowledges-rotation',
    'rotation',
    'During a key rotation a callback carries two signatures, by the old and the new secret; it is acknowledged whichever of them the receiver holds, and in either order.',
    'no callback signed with two secrets was sent',
  ),
  acknowledgedRule(
    'receiver.acknowledges-slow-body',
    'slow_body',
    'A callback whose body arrives slowly, over several seconds, is read to its end and acknowledged.',
    'no callback body was sent slowly',
  ),
  acknowledgedRule(
    'receiver.acknowledges-at-limits',
    'at_limits',
    'A callback whose task has every field at its documented limit (16 metadata keys of 64 characters with values of 512, null fields present) is acknowledged.',
    'no callback at the documented limits was sent',
  ),
  refusedRule(
    'receiver.rejects-forged-signature',
    'forged_signature',
    'A delivery whose signature does not verify is turned away with a non-2xx status: anyone can post to a public address.',
    'no forged delivery was sent (a forged_signature callback fault sends one)',
  ),
  refusedRule(
    'receiver.rejects-other-bytes',
    'other_bytes',
    'A delivery whose signature covers other bytes than the body received (the same JSON serialized another way) is turned away: the signature is over the raw bytes.',
    'no delivery signed over other bytes was sent',
  ),
  refusedRule(
    'receiver.rejects-missing-header',
    'missing_header',
    'A delivery without webhook-id, webhook-timestamp or webhook-signature is turned away: it cannot be verified.',
    'no delivery without a header was sent',
  ),
  refusedRule(
    'receiver.rejects-stale-timestamp',
    'stale_timestamp',
    'A correctly signed delivery whose webhook-timestamp is more than 5 minutes off is turned away: a replayed old message must not act again.',
    'the receiver was not probed with a stale timestamp (POST /_emulator/verdict/probe)',
  ),
  refusedRule(
    'receiver.rejects-unknown-version',
    'unknown_version',
    'A signature under a version other than v1 is not taken for a v1 signature: the delivery is turned away.',
    'no delivery signed under an unknown version was sent',
  ),
  refusedRule(
    'receiver.rejects-truncated-body',
    'truncated_body',
    'A delivery whose body arrives empty or cut short is turned away: its signature is over the whole body.',
    'no delivery with an empty or cut body was sent',
  ),
  refusedRule(
    'receiver.rejects-foreign-secret',
    'foreign_secret',
    "A delivery signed, even twice as during a rotation, only with secrets that are not the account's is turned away.",
    "no delivery signed only with secrets not the account's was sent",
  ),
  actsOnce,
];

const rule = (id: string): ReceiverRule => {
  const found = RECEIVER_RULES.find((r) => r.id === id);
  if (!found) throw new Error(`no receiver rule ${id}`);
  return found;
};

/** A receiver rule as one of the verdict's checks: fed the receivers' answers of the client log. */
const asCheck = (r: ReceiverRule): Check => ({ id: r.id, holds: r.holds, judge: (log, limits) => r.judge({ answers: log.callbacks }, limits) });

/** The receiver rules the emulator's own deliveries exercise (a callback, a fault's duplicate or forged one, the probe). */
export const RECEIVER_CHECKS: readonly Check[] = ['receiver.acknowledges', 'receiver.rejects-forged-signature', 'receiver.rejects-stale-timestamp', 'receiver.acknowledges-duplicate'].map(
  (id) => asCheck(rule(id)),
);
