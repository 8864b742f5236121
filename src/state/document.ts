import type { StoredAccount, StoredKey } from '../accounts/index.ts';
import type { LedgerEntry } from '../billing/index.ts';
import type { CallRecord } from '../calls/index.ts';
import type { StoredFile } from '../files/index.ts';
import type { Scenario } from '../scenarios/index.ts';
import type { IdempotencyRecord, StoredTask } from '../tasks/index.ts';
import type { StoredDelivery } from '../webhooks/index.ts';

export const STATE_FORMAT = 'svc-emulator-state';
export const STATE_VERSION = 1;

/**
 * The whole state of an emulator as one readable JSON document: every record, in the order it was made, and the
 * clock's position. Uploaded files' bytes are not in it (only their records): a prepared state refers to result
 * files, which the emulator serves from its own fixtures, and uploads a test makes again.
 */
export interface StateDocument {
  format: typeof STATE_FORMAT;
  version: number;
  exported_at: string | null;
  clock_ms: number | null;
  accounts: StoredAccount[];
  keys: StoredKey[];
  tasks: StoredTask[];
  idempotency: (IdempotencyRecord & { account_id: string; key: string })[];
  /**
   * Every account's entries in the order written, each with its account's number `n`. A document written before
   * the numbers has none: the import numbers each account's entries in document order.
   */
  ledger: LedgerEntry[];
  files: StoredFile[];
  deliveries: StoredDelivery[];
  calls: CallRecord[];
  scenarios: Scenario[];
}
