import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { ReceiverKind } from '../verdict/index.ts';
import { atLimits, everyKind, noteSucceeded } from './messages.ts';
import type { Message } from './messages.ts';
import type { Signing } from './sign.ts';

/** One request of the battery: what it sends, how it is signed, and what it is sent to find out. */
export interface Step {
  webhookId: string;
  kind: ReceiverKind;
  /** What exactly is sent, for the report: `webhook-timestamp 10 minutes ahead`. */
  sent: string;
  /** webhook-timestamp, in seconds from the moment it is sent. */
  offsetSeconds: number;
  body: string;
  signing: Signing;
  /** The body goes out in pieces over the battery's slow-body time. */
  slow: boolean;
  taskId: string | null;
}

/** Steps sent one after the other (a retry after its first attempt); scenarios run side by side. */
export interface Scenario {
  /** The checks whose deliveries it sends. */
  for: readonly string[];
  steps: Step[];
  /** After its steps, the effects hook is asked how often the receiver acted on this task. */
  effects?: { taskId: string; webhookId: string };
}

/** The stale timestamps: twice the tolerance off, either way. @see reference "Limits": timestamp tolerance 5 minutes */
const STALE_SECONDS = 600;
/** The first attempt of a retried message: as long before its retry as the service's first retry waits. */
const RETRY_GAP_SECONDS = 60;

/** Where a body can be cut without splitting a character: the last ASCII one at or before half of it. */
function cutAtHalf(body: string): string {
  let at = Math.floor(body.length / 2);
  while (at > 0 && body.charCodeAt(at) > 0x7f) at -= 1;
  return body.slice(0, at);
}

/**
 * The whole battery: every callback the service sends, then each way a message can be wrong (or right but
 * unusual), each a delivery of its own with its own webhook-id, fresh for every run (a receiver that remembers
 * ids across runs must not take a new run's messages for duplicates).
 * @see reference "Events" → Task callbacks, signing, verification, key rotation, delivery
 */
export function buildBattery(random: Random, nowMs: number, slowBodyMs: number): Scenario[] {
  const id = (): string => ids.deliveryId(random);
  /** A step sending `m` as the service would, but for what `over` changes (its signers, version, a header, the bytes). */
  const step = (kind: ReceiverKind, m: Message, sent: string, over: Partial<Omit<Step, 'signing'>> & Partial<Signing> = {}): Step => {
    const { signers = ['secret'], signed, version = 'v1', omit = null, ...rest } = over;
    const body = rest.body ?? m.body;
    return { webhookId: id(), kind, sent, offsetSeconds: 0, slow: false, taskId: m.taskId, ...rest, body, signing: { signers, signed: signed ?? body, version, omit } };
  };
  const note = (): Message => noteSucceeded(random, nowMs - 2_000);
  const one = (check: string, s: Step): Scenario => ({ for: [check], steps: [s] });

  const [first, ...others] = everyKind(random, nowMs).map((m) => one('receiver.acknowledges', step('message', m, m.label)));
  const retried = note();
  const retry = id();
  const earlier = noteSucceeded(random, nowMs - 30_000);
  const later = note();
  const replayed = note();
  const replayId = id();
  const cut = note();
  const other = note();
  return [
    // The first goes alone: an address that does not answer ends the run before anything else is sent.
    first as Scenario,
    one('receiver.acknowledges-slow-body', step('slow_body', note(), `the body sent in pieces over ${slowBodyMs} ms`, { slow: true })),
    ...others,
    {
      for: ['receiver.acknowledges-duplicate', 'receiver.acts-once'],
      steps: [
        step('message', retried, `${retried.label}, its first attempt ${RETRY_GAP_SECONDS} s ago`, { webhookId: retry, offsetSeconds: -RETRY_GAP_SECONDS }),
        step('duplicate', retried, `the same message again under its webhook-id, re-signed with a webhook-timestamp ${RETRY_GAP_SECONDS} s later`, { webhookId: retry }),
      ],
      effects: { taskId: retried.taskId as string, webhookId: retry },
    },
    {
      for: ['receiver.acknowledges-out-of-order'],
      steps: [
        step('out_of_order', later, `${later.label}, whose task ended last, sent first`),
        step('out_of_order', earlier, `${earlier.label}, whose task ended 28 s earlier, sent second`),
      ],
    },
    one('receiver.acknowledges-rotation', step('rotation', note(), "signed by the rotation's other secret, then by the account's", { signers: ['rotated', 'secret'] })),
    one('receiver.acknowledges-rotation', step('rotation', note(), "signed by the account's secret, then by the rotation's other", { signers: ['secret', 'rotated'] })),
    one('receiver.acknowledges-at-limits', ((m) => step('at_limits', m, m.label))(atLimits(random, nowMs - 1_000))),
    one('receiver.rejects-forged-signature', step('forged_signature', note(), "signed with a secret not the account's", { signers: ['stranger'] })),
    {
      for: ['receiver.rejects-forged-signature'],
      steps: [
        step('message', replayed, replayed.label, { webhookId: replayId }),
        step('forged_signature', note(), "the webhook-id of a message just acknowledged, on another body signed with a secret not the account's", {
          webhookId: replayId,
          signers: ['stranger'],
        }),
      ],
    },
    one('receiver.rejects-other-bytes', step('other_bytes', other, 'the body pretty-printed; the signature over its compact JSON', { body: JSON.stringify(other.envelope, null, 2), signed: other.body })),
    ...(['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const).map((header) =>
      one('receiver.rejects-missing-header', ((m) => step('missing_header', m, `no ${header} header`, { omit: header }))(note())),
    ),
    one('receiver.rejects-stale-timestamp', step('stale_timestamp', note(), `webhook-timestamp ${STALE_SECONDS / 60} minutes old`, { offsetSeconds: -STALE_SECONDS })),
    one('receiver.rejects-stale-timestamp', step('stale_timestamp', note(), `webhook-timestamp ${STALE_SECONDS / 60} minutes ahead`, { offsetSeconds: STALE_SECONDS })),
    one('receiver.rejects-unknown-version', ((m) => step('unknown_version', m, 'its one signature tagged v2 instead of v1', { version: 'v2' }))(note())),
    one('receiver.rejects-truncated-body', step('truncated_body', cut, 'an empty body; the signature over the whole one', { body: '', signed: cut.body })),
    one('receiver.rejects-truncated-body', step('truncated_body', cut, 'the first half of the body; the signature over the whole one', { body: cutAtHalf(cut.body), signed: cut.body })),
    one('receiver.rejects-foreign-secret', step('foreign_secret', note(), "two v1 signatures, as during a rotation, neither by the account's secrets", { signers: ['stranger2', 'stranger3'] })),
  ];
}

/** The scenarios that feed the chosen checks, in battery order. */
export const scenariosFor = (battery: readonly Scenario[], checks: ReadonlySet<string>): Scenario[] => battery.filter((s) => s.for.some((c) => checks.has(c)));
