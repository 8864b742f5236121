import type { LedgerEntry, Points } from '../billing/index.ts';
import type { MediaFixture } from '../files/fixtures.ts';
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
  /** Exact virtual times (the task object shows whole seconds). */
  created_ms: number;
  started_ms: number | null;
  plan: TaskPlan;
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
  /** Scenarios loaded through the control API. */
  scenarios: Scenario[];
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
  files: {},
  file_names: {},
  scenarios: [],
  clock_ms: null,
});
