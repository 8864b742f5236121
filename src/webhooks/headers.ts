import type { StoredAccount } from '../accounts/index.ts';
import { parseTime } from '../clock/index.ts';
import type { DeliveryAttempt, StoredDelivery } from './records.ts';
import { ROTATION_OVERLAP_MS } from './schedule.ts';
import { signatureHeader } from './sign.ts';

/**
 * The headers of one attempt's request, as the sender sends them and the control API shows them.
 * @see reference "Events" → Delivery: webhook-id, webhook-timestamp, webhook-signature
 */
export function attemptHeaders(webhookId: string, timestampSeconds: number, signature: string): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'Svc-Webhook/1.0',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signature,
  };
}

/** The secrets that sign at `atMs` for an account as it is then: its own, and the rotated-out ones still in overlap. */
export function activeSecrets(account: StoredAccount, atMs: number): string[] {
  const previous = (account.previous_secrets ?? []).filter((p) => p.until_ms > atMs).map((p) => p.secret);
  return [account.webhook_secret, ...previous];
}

/**
 * The secrets that signed at `atMs`, worked back from the account as it is now: a rotation after `atMs` is undone
 * (each rotated-out secret carries its rotation time as `until_ms` minus the overlap). Only for attempts recorded
 * before their signature was kept: a rotation at the very same clock time counts as before, and a secret that a
 * later rotation has forgotten (its overlap over) cannot be brought back, so the result can be wrong after two.
 */
export function secretsAt(account: StoredAccount, atMs: number): string[] {
  const previous = account.previous_secrets ?? [];
  const laterRotation = previous.findIndex((p) => p.until_ms - ROTATION_OVERLAP_MS > atMs);
  if (laterRotation === -1) return activeSecrets(account, atMs);
  const current = previous[laterRotation] as { secret: string };
  const overlapping = previous.slice(0, laterRotation).filter((p) => p.until_ms > atMs).map((p) => p.secret);
  return [current.secret, ...overlapping];
}

/**
 * The headers an attempt was sent with (its body is the delivery's, stored once): rebuilt from the delivery's id, the
 * attempt's webhook-timestamp and the signature it kept. An attempt that kept none has it recomputed from the
 * account's secrets (`secretsAt`); null then if the account is gone.
 */
export function attemptRequestHeaders(delivery: StoredDelivery, attempt: DeliveryAttempt, account: StoredAccount | undefined): Record<string, string> | null {
  const signature =
    attempt.webhook_signature ??
    (account ? signatureHeader(secretsAt(account, parseTime(attempt.at)), delivery.id, attempt.webhook_timestamp, delivery.body) : null);
  return signature === null ? null : attemptHeaders(delivery.id, attempt.webhook_timestamp, signature);
}
