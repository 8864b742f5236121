/**
 * Faults injected at run time (`/_emulator/faults`, `--faults FILE`): rules as data. The document's schema
 * (openapi/admin.yaml, `FaultRuleInput`) checks their shape; `checkRules` the few things a schema cannot.
 */

/** Which `/v1` requests a rule takes: every field given must match. */
export interface RequestMatch {
  method?: string;
  /** Exact, or a prefix when it ends in `*` (`/v1/tasks*`). */
  path?: string;
  model?: string;
  /** The API key as sent (`sk-…`). */
  key?: string;
  account?: string;
}

/** Which callback messages a rule takes. */
export interface CallbackMatch {
  /** The message's `type` (`task.succeeded`, …). */
  event?: string;
  account?: string;
}

export type RequestFault =
  /** An error answer in the endpoint's shape, with nothing done: no task, no freeze. */
  | { kind: 'error'; code: string; retry_after?: number }
  /** Real milliseconds before the status line (or a stream's first byte), or between a stream's chunks. */
  | { kind: 'latency'; ms: number; between_chunks?: boolean }
  /** The connection is destroyed after the request was read, without an answer. */
  | { kind: 'reset' }
  /** A stream ends after this many chunks without its error event, as a dropped connection does. */
  | { kind: 'cut'; after_chunks: number }
  /** The answer goes out at this many bytes per second. */
  | { kind: 'trickle'; bytes_per_second: number };

export type CallbackFault =
  /** The same message delivered twice, under the same webhook-id. */
  | { kind: 'duplicate' }
  /** Virtual seconds before the first attempt. */
  | { kind: 'delay'; seconds: number }
  /** A later task's callback delivered before an earlier one's, where both are due. */
  | { kind: 'out_of_order' }
  /** An extra delivery with a wrong signature and its own webhook-id, sent before the real one. */
  | { kind: 'forged_signature' };

export const REQUEST_FAULTS = ['error', 'latency', 'reset', 'cut', 'trickle'] as const;
export const CALLBACK_FAULTS = ['duplicate', 'delay', 'out_of_order', 'forged_signature'] as const;

interface HowOften {
  /** Only the first N matching requests (or messages). */
  times?: number;
  /** Each matching one with this chance, drawn from the rule set's seeded generator. */
  probability?: number;
}

export type RuleInput =
  | ({ match?: RequestMatch; fault: RequestFault } & HowOften)
  | ({ match?: CallbackMatch; fault: CallbackFault } & HowOften);

/** A rule as listed: its id, and how many matching requests it saw and how many it injected into. */
export type FaultRule = RuleInput & { id: string; matched: number; hits: number };

export type RequestRule = FaultRule & { match?: RequestMatch; fault: RequestFault };
export type CallbackRule = FaultRule & { match?: CallbackMatch; fault: CallbackFault };

/** What a `/v1` request is, as far as a rule can tell before it is answered. */
export interface RequestFacts {
  method: string;
  path: string;
  model?: string | undefined;
  key?: string | undefined;
  account?: string | undefined;
}

export interface CallbackFacts {
  event: string;
  account?: string | undefined;
}
