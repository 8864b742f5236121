// What the tests expect of a task and a scenario on the wire, written down once by the tests (not taken from src/: a test that
// reads its expectations from the code under test cannot catch the code drifting from the reference).
// @see reference "Task object", "Task failure reasons"

/** The failure codes a task may end with. */
export const FAILURE_CODES = [
  'invalid_params',
  'content_rejected',
  'insufficient_points',
  'timeout',
  'service_unavailable',
  'capacity_shortage',
  'generation_failed',
  'no_result',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

/** A task as GET /v1/tasks/{id} answers it; `input` narrowed by a test that generates it. */
export interface WireTask<Input = Record<string, unknown>> {
  id: string;
  model: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  input: Input;
  points: { frozen: string; charged: string; refunded: string };
  output: unknown;
  error: { code: string; message: string } | null;
  metadata: Record<string, string>;
}

/** A scenario as GET /_emulator/scenarios lists it (openapi/admin.yaml Scenario); `Code`, a test's failure codes. */
export interface WireScenario<Code extends string = string> {
  name: string;
  queue_seconds: number;
  processing_seconds: number;
  per_model?: Record<string, { queue_seconds?: number; processing_seconds?: number }>;
  outcome: 'succeeded' | 'failed' | 'timeout' | 'rejected';
  failure?: { code: Code; during: 'queued' | 'processing' };
  cancelable_while_processing: boolean;
}
