import type { FileRecord, TaskFailureCode } from '../tasks/task.ts';

/** A scenario as the files and the control API give it (schema: openapi/admin.yaml#/components/schemas/Scenario). */
export interface Scenario {
  name: string;
  description?: string;
  match?: ScenarioMatch;
  queue_seconds: number;
  processing_seconds: number;
  per_model?: Record<string, { queue_seconds?: number; processing_seconds?: number }>;
  outcome: 'succeeded' | 'failed' | 'timeout' | 'rejected';
  failure?: { code: Exclude<TaskFailureCode, 'canceled'>; during: 'queued' | 'processing'; message?: string };
  cancelable_while_processing: boolean;
  output?: { text?: string; files?: Partial<FileRecord>[]; duration?: number; usage?: Record<string, unknown> };
  settle?: { seconds?: number; output_tokens?: number };
  rejection_message?: string;
  text?: TextBehaviour;
}

/** How a text call behaves under a scenario. */
export interface TextBehaviour {
  first_token_ms: number;
  chunk_interval_ms: number;
  reject: boolean;
  error_after_chunks?: number;
  error_code: 'service_unavailable' | 'content_rejected' | 'invalid_params';
  max_output_tokens?: number;
  output_tokens?: number;
  text?: string;
}

export interface ScenarioMatch {
  models?: string[];
  accounts?: string[];
  input?: Record<string, string | number | boolean | { contains: string }>;
  metadata?: Record<string, string>;
}

/**
 * What a task will do, fixed at submission and stored with it, so a restart (or a scenario loaded later)
 * never changes the life of a task already accepted.
 */
export interface TaskPlan {
  scenario: string;
  queue_ms: number;
  /** null: never finishes on its own (the timeout fires). */
  processing_ms: number | null;
  outcome: 'succeeded' | 'failed';
  failure: { code: Exclude<TaskFailureCode, 'canceled'>; during: 'queued' | 'processing'; message: string | null } | null;
  cancelable_while_processing: boolean;
  output: Scenario['output'] | null;
  settle: Scenario['settle'] | null;
}
