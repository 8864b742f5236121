import type { FileRecord, TaskFailureCode } from '../contract/index.ts';

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
  /** The natural answer's length; with `chunks`, the output tokens the usage reports and the call is charged. */
  output_tokens?: number;
  /** Input tokens the usage reports and the call is charged, instead of the counted ones. */
  input_tokens?: number;
  text?: string;
  /** A recorded answer: exactly these pieces, one content delta each, never cut by a stop sequence or the maximum. */
  chunks?: string[];
  /** How a recorded answer (`chunks`) ended; absent: `stop`. */
  finish?: 'stop' | 'length' | 'stop_sequence';
  /** The stop sequence that ended a recorded answer: given exactly when `finish` is `stop_sequence`. */
  stop_sequence?: string;
  /**
   * How a Messages-style answer cut at a stop sequence says so: `end_turn` (the reference's set, the default) or
   * `stop_sequence` (the Anthropic-native value, for teams whose code expects it).
   */
  messages_stop_reason?: 'end_turn' | 'stop_sequence';
  /** A JSON value as the answer's content, serialized. */
  json?: unknown;
  /** Tool calls as the answer (Chat Completions-style only). */
  tool_calls?: { name: string; arguments?: Record<string, unknown>; id?: string }[];
  /** An error answer instead of one: nothing frozen, nothing charged. */
  error?: { code: TextErrorCode; retry_after?: number; message?: string };
  /**
   * Answers in order, each a text block of its own: a step answers `times` calls (default 1; the last one every
   * call after), then the next one does.
   */
  answers?: TextBehaviour[];
  /** On the block: the calls the scenario answers through its match rules, then the next match applies. On a step: the calls it answers. */
  times?: number;
}

/** The codes an error answer may have: those a text call can be refused with. */
export type TextErrorCode =
  | 'service_unavailable'
  | 'rate_limited'
  | 'concurrency_limited'
  | 'content_rejected'
  | 'invalid_params'
  | 'insufficient_points'
  | 'key_quota_exceeded'
  | 'internal_error';

/** A condition on a text: exactly one of `contains`, `equals`, `regex`. */
export interface TextCondition {
  contains?: string;
  equals?: string;
  /** A JavaScript regular expression, without slashes. */
  regex?: string;
  case_insensitive?: boolean;
}

export interface ScenarioMatch {
  models?: string[];
  accounts?: string[];
  input?: Record<string, string | number | boolean | { contains: string }>;
  metadata?: Record<string, string>;
  /** A text call's `textFingerprint()` (`sha256:` and 64 hex digits); a task submission never fits. */
  text_request?: string;
  // Text-call rules (a task submission never fits a match with one of them).
  formats?: ('chat' | 'responses' | 'messages')[];
  stream?: boolean;
  last_user?: TextCondition;
  system?: TextCondition;
  any_message?: TextCondition;
  /** Every one of these tools is offered. */
  tools?: string[];
  tool_choice?: 'none' | 'auto' | 'required' | { name: string };
  response_format?: { type?: 'text' | 'json_object' | 'json_schema'; schema_name?: string };
  tool_result?: { name?: string; content?: TextCondition };
  assistant_turns?: number;
}

/** The match keys only a text call can fit. */
export const TEXT_MATCH_KEYS = [
  'text_request',
  'formats',
  'stream',
  'last_user',
  'system',
  'any_message',
  'tools',
  'tool_choice',
  'response_format',
  'tool_result',
  'assistant_turns',
] as const satisfies readonly (keyof ScenarioMatch)[];

/** The match keys only a task submission can fit. */
export const TASK_MATCH_KEYS = ['input', 'metadata'] as const satisfies readonly (keyof ScenarioMatch)[];

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
