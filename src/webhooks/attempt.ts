import { createHash } from 'node:crypto';
import { formatTime } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { AccountsRepo } from '../accounts/index.ts';
import type { ClientLogStore } from '../verdict/index.ts';
import { activeSecrets, attemptHeaders } from './headers.ts';
import type { DeliveryAttempt, StoredDelivery } from './records.ts';
import { receiverAnswer } from './receiver-answers.ts';
import type { SendPool } from './send-pool.ts';
import type { Send } from './send.ts';
import { signatureHeader } from './sign.ts';

/** How far back a stale-timestamp probe's webhook-timestamp is, unless asked otherwise: twice the tolerance. */
export const DEFAULT_STALE_SECONDS = 600;

export interface AttemptDeps {
  clock: Clock;
  db: { accounts: AccountsRepo };
  send: Send;
  pool: SendPool;
  timeoutMs: number;
  virtualTimestamps: boolean;
  clientLog: ClientLogStore;
}

/**
 * One attempt at a delivery as stored, stamped with the virtual time it fell due at; resolves with its record, not
 * yet stored, once the receiver has answered or the timeout has ended it. Signed when its slot in the pool is free
 * (webhook-timestamp is the time of the send, not of the wait): with the account's secrets at `atMs`, or on
 * purpose wrongly for a `forged_signature` attempt (a secret no account has) and `staleSeconds` in the past
 * for a `stale_timestamp` one. The receiver's answer goes to the client log for the verdict.
 */
export async function sendAttempt(
  deps: AttemptDeps,
  delivery: StoredDelivery,
  kind: DeliveryAttempt['kind'],
  atMs: number,
  staleSeconds = DEFAULT_STALE_SECONDS,
): Promise<Omit<DeliveryAttempt, 'number'>> {
  const { clock } = deps;
  const { timestamp, signature, result, durationMs } = await deps.pool.run(async () => {
    const account = deps.db.accounts.get(delivery.account_id);
    const sentAt = Math.floor((deps.virtualTimestamps ? atMs : clock.wallNow()) / 1000);
    const timestamp = kind === 'stale_timestamp' ? sentAt - staleSeconds : sentAt;
    const secrets = kind === 'forged_signature' ? [forgedSecret(delivery.id)] : account ? activeSecrets(account, atMs) : [];
    const signature = signatureHeader(secrets, delivery.id, timestamp, delivery.body);
    const headers = attemptHeaders(delivery.id, timestamp, signature);
    const started = clock.wallNow();
    let result: Pick<DeliveryAttempt, 'status_code' | 'error' | 'response_excerpt'>;
    let answer: { status: number } | { error: unknown };
    try {
      const answered = await deps.send({ url: delivery.url, headers, body: delivery.body, timeoutMs: deps.timeoutMs });
      result = { status_code: answered.status, error: null, response_excerpt: answered.excerpt };
      answer = { status: answered.status };
    } catch (err) {
      result = { status_code: null, error: (err as Error).message, response_excerpt: '' };
      answer = { error: err };
    }
    const durationMs = clock.wallNow() - started;
    deps.clientLog.callback(receiverAnswer(delivery, kind, started, durationMs, answer));
    return { timestamp, signature, result, durationMs };
  });
  return {
    kind,
    at: formatTime(atMs),
    webhook_timestamp: timestamp,
    webhook_signature: signature,
    ...result,
    duration_ms: durationMs,
    ok: result.status_code !== null && result.status_code >= 200 && result.status_code < 300,
  };
}

/**
 * The secret a forged delivery is signed with: one no account has, worked out from the delivery's own id rather
 * than drawn when the send gets its slot, an order that I/O decides: a seeded run stays repeatable.
 */
const forgedSecret = (webhookId: string): string =>
  `whsec_${createHash('sha256').update(`svc-emulator forged ${webhookId}`).digest().subarray(0, 24).toString('base64')}`;
