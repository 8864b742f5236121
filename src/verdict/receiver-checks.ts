import { result } from './requests.ts';
import type { Check, DeliveryKind, ReceiverAnswer } from './types.ts';

const accepted = (a: ReceiverAnswer): boolean => typeof a.outcome === 'number' && a.outcome >= 200 && a.outcome <= 299;
const answered = (a: ReceiverAnswer): string => (typeof a.outcome === 'number' ? `answered ${a.outcome}` : a.outcome === 'timeout' ? 'did not answer in time' : 'could not be reached');

/** One check per kind of delivery: each of its deliveries must be taken (2xx in time) or turned away (non-2xx). */
function deliveryCheck(id: string, kind: DeliveryKind, holds: string, take: boolean, missing: string): Check {
  return {
    id,
    holds,
    judge(log, limits) {
      const deliveries = log.callbacks.filter((c) => c.kind === kind);
      const failures = deliveries.flatMap((d) => {
        if (take && (!accepted(d) || d.elapsedMs > limits.callbackTimeoutMs)) {
          const late = accepted(d) ? `answered after ${d.elapsedMs} ms` : answered(d);
          return [{ reason: `the receiver ${late} to ${describe(kind)} ${d.webhookId}`, evidence: [d.webhookId] }];
        }
        // A receiver that times out or is down turned nothing away: it never judged the message.
        if (!take && (accepted(d) || typeof d.outcome !== 'number')) {
          return [{ reason: `the receiver ${answered(d)} to ${describe(kind)} ${d.webhookId}`, evidence: [d.webhookId] }];
        }
        return [];
      });
      return result(id, failures, deliveries.length > 0, missing);
    },
  };
}

const describe = (kind: DeliveryKind): string =>
  ({ message: 'callback', duplicate: 'the duplicate of callback', forged_signature: 'the forged delivery', stale_timestamp: 'the stale probe' })[kind];

export const RECEIVER_CHECKS: readonly Check[] = [
  deliveryCheck(
    'receiver.acknowledges',
    'message',
    'The callback receiver answers every callback with a 2xx within the timeout (10 s by the reference); anything else makes the service retry.',
    true,
    'no callback was delivered',
  ),
  deliveryCheck(
    'receiver.rejects-forged-signature',
    'forged_signature',
    'A delivery whose signature does not verify is turned away with a non-2xx status: anyone can post to a public address.',
    false,
    'no forged delivery was sent (a forged_signature callback fault sends one)',
  ),
  deliveryCheck(
    'receiver.rejects-stale-timestamp',
    'stale_timestamp',
    'A correctly signed delivery whose webhook-timestamp is more than 5 minutes off is turned away: a replayed old message must not act again.',
    false,
    'the receiver was not probed with a stale timestamp (POST /_emulator/verdict/probe)',
  ),
  deliveryCheck(
    'receiver.acknowledges-duplicate',
    'duplicate',
    'A message delivered again under the same webhook-id is acknowledged with a 2xx (and handled once): callbacks may arrive more than once.',
    true,
    'no duplicate was delivered (a duplicate callback fault sends one)',
  ),
];
