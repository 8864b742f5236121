import type { PriceRule } from '../points/index.ts';

/**
 * What clients observed, as a history to judge: plain data, independent of any HTTP library. Times are the
 * client's epoch milliseconds: `sentMs` when the request went out, `receivedMs` when the answer came. The server
 * read the task somewhere between the two, so two reads that overlapped in time may have seen it in either order.
 * One history is one account's.
 */
export interface History {
  tasks?: readonly TaskObservation[];
  pages?: readonly ListPageObservation[];
  texts?: readonly TextCallObservation[];
  callbacks?: readonly CallbackObservation[];
}

/** The answer that carried (or refused) a task: submit, query, list item, cancel, or an idempotent replay. */
export type TaskReadKind = 'submit' | 'get' | 'list-item' | 'cancel' | 'replay';

export interface TaskObservation {
  requestId: string | null;
  kind: TaskReadKind;
  sentMs: number;
  receivedMs: number;
  /** The task object as parsed JSON; null when the answer was an error. Fields are checked defensively. */
  task: unknown;
  /** HTTP status and error code of the answer; absent means a 200. */
  answer?: { status: number; code: string | null };
  /** A submission (or replay) with an Idempotency-Key, and what was sent with it (input as normalized as known). */
  key?: { idempotencyKey: string; model: string; input: unknown };
  /** The account's available points read just before the request and just after its answer, nothing else moving them. */
  balance?: { before: string; after: string };
}

/** One page of GET /v1/tasks. Pages of one walk share `walk` and are taken page 1, 2, … */
export interface ListPageObservation {
  requestId: string | null;
  walk: string;
  query: { status?: string; model?: string; limit: number; page: number };
  items: readonly unknown[];
  has_more: boolean;
  sentMs: number;
  receivedMs: number;
  /** Tasks were submitted since the walk's previous page, so offset pages may have shifted. */
  submitsIntervened?: boolean;
}

export type TextFormat = 'chat' | 'responses' | 'messages';

/** A text call: the maximum asked for (null: none sent) and the answer, whole or as the stream's parsed events in order. */
export type TextCallObservation = {
  requestId: string | null;
  format: TextFormat;
  maxTokens: number | null;
  /** The prompt had text (so it has input tokens). */
  promptNonEmpty: boolean;
} & ({ streamed: false; body: unknown } | { streamed: true; events: readonly unknown[] });

/** One callback request as the receiver got it (a retry or a resend is another, with the same webhook-id). */
export interface CallbackObservation {
  /** Header names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** The raw body exactly as received. */
  body: string | Uint8Array;
  receivedMs: number;
  /**
   * The receiver's own wall clock at receipt, when it differs from `receivedMs` (the emulator's clock fast-forwarded
   * by the suite): webhook-timestamp is judged against the receiver's clock, as a receiver checks it.
   */
  receivedWallMs?: number;
  /** The account's signing secrets (`whsec_…`), when known: two during a rotation. */
  secrets?: readonly string[];
}

/** What the checker needs besides the history. */
export interface CheckContext {
  /** Price rules by model code, as the OpenAPI document's `x-pricing` states them. */
  prices?: Readonly<Record<string, PriceRule>>;
  /** How far the client's clock may be from the service's (ms); default 1000 (times are whole seconds). */
  clockSkewMs?: number;
  /** Output tokens of delivered text, when the deployment's counting is known (the emulator: one per word). */
  countOutputTokens?: (text: string) => number;
}

/** A departure from the contract found in a history. */
export interface Deviation {
  check: string;
  message: string;
  requestIds: string[];
}

/** A check's id and what it holds, for reports and the README. */
export interface CheckInfo {
  id: string;
  holds: string;
}
