import type { Points } from '../points/index.ts';
import type { ErrorDetail } from '../errors/index.ts';

/**
 * A call record: every /v1 request leaves one, rejected ones included, looked up by request id.
 * Prompts and outputs of text calls, and the bodies of every call (`bodies`), are kept only when the emulator is
 * started with `--record-content`.
 * The fields after `latency_ms` came later: records stored before them lack them.
 * @see reference "What the service does": every /v1 request is recorded; "Text billing" 7
 */
export interface CallRecord {
  request_id: string;
  at: string;
  /** The key the request carried, when it was a known one. */
  key: string | null;
  account_id: string | null;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  model: string | null;
  /** Text calls: tokens and points, and whether the client went away mid-stream. */
  text?: {
    stream: boolean;
    input_tokens: number;
    output_tokens: number;
    points: { frozen: Points; charged: Points; refunded: Points };
    client_closed: boolean;
    content?: { prompt: string[]; output: string };
  };
  task_id?: string;
  /** Real milliseconds from the request to the end of its answer. */
  latency_ms: number;
  /** The query string as sent, without its `?` (secret-named parameters masked); only when there was one. */
  query?: string;
  /** The request's headers, names in lower case, credentials and signatures masked. */
  request_headers?: Record<string, string>;
  /** An error answer's message and field details, as its body said them. */
  error_message?: string;
  error_details?: ErrorDetail[];
  /** The scenario chosen for the call: a task submission's, or the one a text call's answer came from. */
  scenario?: string;
  /** Text calls: how their answer was chosen (absent on a call refused before it was, and on older records). */
  text_answer?: TextAnswer;
  /**
   * The fault rule (`/_emulator/faults`, `--faults`) that took the request: its answer is the fault's, not the
   * service's (an error with nothing done, a reset without any answer, a late, slow or cut one).
   */
  injected_fault?: InjectedFault;
  /**
   * Only with `--record-content` (so a record without it says the option was off): the request's body and the
   * answer's, secrets masked; null when there was none (a read, a reset).
   */
  bodies?: { request: RecordedBody | null; response: RecordedBody | null };
}

/**
 * A body as a call record keeps it: its first 64 KiB of text (src/calls/recorded-body.ts MOST_BODY_BYTES), a text
 * stream's events as they were sent, secrets masked as in recordings.
 */
export interface RecordedBody {
  content_type: string | null;
  /** Bytes of the whole body, when known. */
  size: number | null;
  /** `text` holds only the body's beginning: it was longer than the limit, or not read whole. */
  truncated: boolean;
  /** The body as UTF-8 text; absent when it was not text (`omitted: 'binary'`). */
  text?: string;
  omitted?: 'binary';
}

/**
 * How a text call's answer was chosen: named by the `X-Emulator-Scenario` header, picked by the `scenario`'s match
 * rules, or `generated` (neither: the `default` scenario's); `unmatched` when strict text answers refused a call
 * nothing chose. `answer`: which of the scenario's `answers` (from 1), when it gives them.
 * @see docs/reference/scenarios.md "Answers on demand"
 */
export interface TextAnswer {
  by: 'header' | 'match' | 'generated' | 'unmatched';
  answer?: number;
}

/** Which rule injected which kind of fault (`fault_3`, `reset`). */
export interface InjectedFault {
  rule: string;
  kind: string;
}

/** What a route adds to its call's record (`res.locals.call`). */
export type CallDetails = Partial<Pick<CallRecord, 'model' | 'text' | 'task_id' | 'error_code' | 'error_message' | 'scenario' | 'text_answer' | 'injected_fault'>>;
