import type { DeliveryKind, ReceiverAnswer } from '../verdict/index.ts';
import type { DeliveryAttempt, StoredDelivery } from './records.ts';
import { NoAnswerInTime } from './send.ts';

/** What the verdict calls an attempt: the message itself (however it was sent), or the probe it was. */
const kindOf = (kind: DeliveryAttempt['kind']): DeliveryKind => (kind === 'automatic' || kind === 'resend' || kind === 'manual' ? 'message' : kind);

/**
 * A receiver's answer to one attempt, as the client log keeps it for the verdict: its status, or a timeout (it took
 * the connection and sent no status line in time), or unreachable (any other failure to get an answer).
 */
export function receiverAnswer(
  delivery: Pick<StoredDelivery, 'id' | 'account_id' | 'task_id'>,
  kind: DeliveryAttempt['kind'],
  startedWall: number,
  elapsedMs: number,
  answer: { status: number } | { error: unknown },
): ReceiverAnswer {
  return {
    webhookId: delivery.id,
    account: delivery.account_id,
    taskId: delivery.task_id,
    kind: kindOf(kind),
    atMs: startedWall,
    outcome: 'status' in answer ? answer.status : answer.error instanceof NoAnswerInTime ? 'timeout' : 'unreachable',
    elapsedMs,
  };
}
