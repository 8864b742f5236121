import type { LedgerEntry, Points } from '../billing/index.ts';
import type { Task } from '../tasks/task.ts';

/** Bump when the stored shape changes; `openStore` refuses files of a newer version. */
export const SCHEMA_VERSION = 1;

export interface StoredAccount {
  id: string;
  available: Points;
  frozen: Points;
  charged: Points;
  webhook_url: string | null;
  webhook_secret: string;
  created_at: string;
}

export interface StoredKey {
  key: string;
  account_id: string;
  created_at: string;
}

export interface StoredTask {
  task: Task;
  account_id: string;
  /** Creation order; newest-first listing sorts on it because created_at has whole seconds only. */
  seq: number;
  idempotency_key: string | null;
}

export interface IdempotencyRecord {
  task_id: string;
  model: string;
  /** Canonical JSON of the normalized input: equal requests normalize equal. */
  input: string;
}

export interface StoreData {
  schema_version: number;
  seq: number;
  accounts: Record<string, StoredAccount>;
  keys: Record<string, StoredKey>;
  tasks: Record<string, StoredTask>;
  ledger: LedgerEntry[];
  /** Keyed by `${account_id} ${Idempotency-Key}`. */
  idempotency: Record<string, IdempotencyRecord>;
  /** Last virtual time seen, so a manual clock resumes where it stopped after a restart. */
  clock_ms: number | null;
}

export const emptyData = (): StoreData => ({
  schema_version: SCHEMA_VERSION,
  seq: 0,
  accounts: {},
  keys: {},
  tasks: {},
  ledger: [],
  idempotency: {},
  clock_ms: null,
});
