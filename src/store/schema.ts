import type { LedgerEntry, Points } from '../billing/index.ts';
import type { CallRecord } from '../calls/records.ts';
import type { MediaFixture } from '../files/fixtures.ts';
import type { KeySettings, QuotaUse } from '../keys/settings.ts';
import type { Scenario, TaskPlan } from '../scenarios/types.ts';
import type { Task } from '../tasks/task.ts';

/** Bump when the stored shape changes; `openStore` refuses files of a newer version. */
export const SCHEMA_VERSION = 2;

export interface StoredAccount {
  id: string;
  available: Points;
  frozen: Points;
  charged: Points;
  webhook_url: string | null;
  webhook_secret: string;
  /** Running tasks plus text calls the account may have at once; null: no cap. */
  concurrency?: number | null;
  /** Secrets replaced by a rotation, still signing until `until_ms` (24 clock hours). */
  previous_secrets?: { secret: string; until_ms: number }[];
  created_at: string;
}

export interface StoredKey {
  key: string;
  account_id: string;
  created_at: string;
  settings?: KeySettings;
  quota_use?: QuotaUse;
}

export interface StoredTask {
  task: Task;
  account_id: string;
  /** Creation order; newest-first listing sorts on it because created_at has whole seconds only. */
  seq: number;
  idempotency_key: string | null;
  /** Exact virtual times (the task object shows whole seconds). */
  created_ms: number;
  started_ms: number | null;
  plan: TaskPlan;
  /** The submission's callback address (not part of the task object). */
  webhook_url?: string | null;
  /** The key that submitted it (quota, concurrency), and what its quota gave at submission. */
  key?: string | null;
  quota_taken?: Points;
}

export type DeliveryType = 'task.succeeded' | 'task.failed' | 'task.canceled' | 'webhook.test';

/** One send of a callback message. */
export interface DeliveryAttempt {
  number: number;
  /** `automatic` (the first send and its retries), `resend` (manual, never retried) or `manual` (a test event). */
  kind: 'automatic' | 'resend' | 'manual';
  /** Virtual time of the send. */
  at: string;
  /** The webhook-timestamp header sent (Unix seconds). */
  webhook_timestamp: number;
  status_code: number | null;
  error: string | null;
  /** Real milliseconds the receiver took. */
  duration_ms: number;
  /** The first 1 KB of the answer. */
  response_excerpt: string;
  ok: boolean;
}

/** A callback message: one per task reaching a terminal state, retried on failure. */
export interface StoredDelivery {
  id: string;
  account_id: string;
  task_id: string | null;
  type: DeliveryType;
  url: string;
  /** The exact bytes sent on every attempt. */
  body: string;
  created_at: string;
  status: 'pending' | 'delivered' | 'failed';
  /** Virtual time the next automatic attempt falls due, or null when none will. */
  next_attempt_ms: number | null;
  attempts: DeliveryAttempt[];
}

/** A file of the service's own storage: an upload, or a result file of a task. */
export interface StoredFile {
  id: string;
  account_id: string;
  /** The unguessable name in the file's address. */
  name: string;
  filename: string;
  type: string;
  mime_type: string;
  size: number;
  duration: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  expires_ms: number;
  /** Where the bytes are: an uploaded blob, or a media fixture of the emulator (result files). */
  source: { kind: 'blob' } | { kind: 'fixture'; fixture: MediaFixture };
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
  files: Record<string, StoredFile>;
  /** File id by served name. */
  file_names: Record<string, string>;
  deliveries: Record<string, StoredDelivery>;
  /** Call records by request id, in arrival order. */
  calls: Record<string, CallRecord>;
  /** Scenarios loaded through the control API. */
  scenarios: Scenario[];
  /** Last virtual time seen, so a manual clock resumes where it stopped after a restart. */
  clock_ms: number | null;
  /** How many times an emulator has started on this store (a seeded id sequence differs per start). */
  starts?: number;
  /** Ledger entries checked for text calls a stopped process left frozen (the next start checks the rest). */
  ledger_checked?: number;
}

export const emptyData = (): StoreData => ({
  schema_version: SCHEMA_VERSION,
  seq: 0,
  accounts: {},
  keys: {},
  tasks: {},
  ledger: [],
  idempotency: {},
  files: {},
  file_names: {},
  deliveries: {},
  calls: {},
  scenarios: [],
  clock_ms: null,
});
