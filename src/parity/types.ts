/**
 * The checks a replayed exchange goes through, each with a stable id (the report's rows, the JUnit testcases).
 * An exchange counts once per check that applies to it: agreed when the check found nothing, differed otherwise.
 */
export const PARITY_CHECKS = {
  'parity.status': 'the HTTP status',
  'parity.headers.content-type': 'the media type of Content-Type (parameters such as charset aside)',
  'parity.headers.request-id': 'X-Request-Id (and Request-Id where either side sends it): present on both, and of the form req_ + 24 lowercase letters or digits on both',
  'parity.headers.stream': 'Cache-Control and X-Accel-Buffering of an event stream, exact',
  'parity.headers.idempotent-replayed': 'Idempotent-Replayed where either side sends it, exact',
  'parity.headers.retry-after': 'Retry-After where either side sends it: present on both (its value is a time)',
  'parity.body.shape': 'the same kind of body (JSON, event stream, text, empty); for JSON the same keys and JSON types at every path, and arrays of the same length',
  'parity.body.values': 'every JSON value exact, except where a mask rule applies (there: presence and type only)',
  'parity.stream.events': 'the event-name sequence (runs of one delta event collapsed) and the shape of each event’s data',
  'parity.stream.values': 'the values in each event’s data exact, except where a mask rule applies',
} as const;

export type CheckId = keyof typeof PARITY_CHECKS;

/** One thing a check found different at one place. */
export interface Finding {
  check: CheckId;
  /** A JSON path into the body (`$.points.frozen`), `headers.<name>`, `status`, or `events[3].delta.text`. */
  path: string;
  recorded: unknown;
  replayed: unknown;
  /** The finding in a sentence. */
  message: string;
  /** More than the two values say (both event sequences, for an event order that differs). */
  detail?: string;
}

/** A check that applied to an exchange, and what it found (nothing: agreed). */
export interface CheckOutcome {
  check: CheckId;
  findings: Finding[];
}

/** A difference as the report lists it: the finding, with where it happened and how to replay it. */
export interface Difference extends Finding {
  /** The exchange's index in the recording's entries, in time order, from 0. */
  entry: number;
  /** Method and path template, ids as `{id}`: `GET /v1/tasks/{id}`. */
  endpoint: string;
  /** The replayed request as a curl line against the deployment, the key redacted. */
  curl: string;
}

export interface CheckTally {
  agreed: number;
  differed: number;
}

export interface EndpointReport {
  endpoint: string;
  exchanges: number;
  checks: Partial<Record<CheckId, CheckTally>>;
}

export interface ParityReport {
  /** The deployment the recording was replayed against. */
  baseUrl: string;
  /** The .har files read. */
  recording: string[];
  exchanges: number;
  checks: number;
  agreed: number;
  differed: number;
  /** agreed / checks as a percentage, rounded down to one decimal (100 only when every check agreed). */
  parity: number;
  endpoints: EndpointReport[];
  differences: Difference[];
  /** What the replay could not reproduce as recorded, and what it did instead. */
  notes: string[];
  durationMs: number;
}
