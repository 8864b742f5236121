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
  /** Every answer, whatever its endpoint, for the rules of the wire (src/observed/wire-rules.ts). */
  answers?: readonly AnswerObservation[];
  /** What keys of other accounts observed, for the isolation rule (src/observed/isolation.ts). */
  others?: readonly OtherAccount[];
}

/**
 * Any answer, whatever its endpoint, as the wire rules read it (src/observed/wire-rules.ts; made by answer-view.ts): the request's facts
 * the answer must fit (its key, its body) and the answer's status, error code and the headers the rules read.
 */
export interface AnswerObservation {
  requestId: string | null;
  method: string;
  /** The path without its query. */
  path: string;
  status: number;
  /** The error code of an error body, in any of the three shapes; null without one. */
  code: string | null;
  /** Answer headers the rules read (null: absent). */
  headers: { retryAfter: string | null; cacheControl: string | null; accelBuffering: string | null; contentType: string | null };
  /** The key the request carried, named by a short hash (never the key itself), and the header it came in. */
  key: { id: string; via: 'bearer' | 'x-api-key' } | null;
  /** The request's body: a JSON object (with its top-level fields), something else, or none. */
  body: { kind: 'object'; fields: readonly string[] } | { kind: 'other' } | { kind: 'none' };
  sentMs: number;
  receivedMs: number;
}

/**
 * What the keys of another account observed (known to be another: its feeder knows the two accounts apart), for
 * the isolation rule. A feeder gives what it has: the proxy each other account's submissions, the suite its second
 * key's reads.
 */
export interface OtherAccount {
  /** How reports name it (never a key). */
  account: string;
  tasks?: readonly TaskObservation[];
  pages?: readonly ListPageObservation[];
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
  /** The task id in the path of a query or cancel, whatever the answer (a refusal names no task otherwise). */
  target?: string;
  /** What a submission sent (`params` read as `input`), whatever the answer: what a task it created would show. */
  sent?: { model: unknown; input: unknown; metadata: unknown };
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
  /** The request but its maximum and streaming (src/observed/truncation.ts): the same for calls asking the same. */
  request?: string;
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
  /** The HTTP status the receiver answered (a non-2xx is a failed delivery, retried), when known. */
  answered?: number;
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
