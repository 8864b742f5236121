import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { AccountsRepo, StoredAccount } from '../accounts/index.ts';
import type { DeliveriesRepo, DeliveryType, StoredDelivery } from './records.ts';

export const notFound = (deliveryId: string): ApiError => new ApiError('not_found', `No callback message '${deliveryId}'.`);

/** What a new callback message says and where it goes; `nextAttemptMs` is its first automatic attempt (null: by hand). */
export interface NewMessage {
  account: StoredAccount;
  type: DeliveryType;
  url: string;
  data: unknown;
  taskId: string | null;
  atMs: number;
  nextAttemptMs: number | null;
}

/** A new callback message with its own webhook-id, pending, not yet stored. */
export const newDelivery = (random: Random, { account, type, url, data, taskId, atMs, nextAttemptMs }: NewMessage): StoredDelivery => ({
  id: ids.deliveryId(random),
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
export function addressedAccount(accounts: AccountsRepo, accountId: string): StoredAccount & { webhook_url: string } {
  const account = accounts.get(accountId);
  if (!account) throw new ApiError('not_found', `No account '${accountId}'.`);
  if (!account.webhook_url) {
    throw new ApiError('invalid_params', 'The account has no default callback address.', [
      { field: 'webhook_url', message: 'the account has none: set it with POST /_emulator/accounts/{id}/webhook' },
    ]);
  }
  return account as StoredAccount & { webhook_url: string };
}

/** A stored delivery, or 404 `not_found`. */
export function deliveryOf(deliveries: DeliveriesRepo, deliveryId: string): StoredDelivery {
  const delivery = deliveries.get(deliveryId);
  if (!delivery) throw notFound(deliveryId);
  return delivery;
}
