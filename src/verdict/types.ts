/**
 * What the emulator saw a client do, as plain data to judge: every `/v1` request of one key (or account), and
 * every answer its callback receiver gave. Times are wall-clock epoch milliseconds: a client waits and retries
 * in real time whatever the emulator's clock shows.
 */
export interface ClientLog {
  requests: readonly ClientRequest[];
  callbacks: readonly ReceiverAnswer[];
}

export interface ClientRequest {
  requestId: string;
  atMs: number;
  key: string | null;
  account: string | null;
  method: string;
  path: string;
  /**
   * A digest of the body as sent, a submit's metadata `emulator_scenario` left out: two requests with the same
   * digest, method, path and steering are the same request.
   */
  bodyDigest: string;
  /**
   * The test's steering as sent (the X-Emulator-Scenario header, a submit's metadata `emulator_scenario`), or null
   * for none: no client changes it between attempts, so two requests that differ in it are the test's two steps.
   * @see steering.ts
   */
  steering: string | null;
  idempotencyKey: string | null;
  /** The HTTP status, or what ended the exchange without one. */
  outcome: number | 'reset' | 'timeout';
  errorCode: string | null;
  /** Seconds, from a 429's Retry-After. */
  retryAfter: number | null;
  /** The task a submit created (or replayed), a GET read or a cancel named. */
  taskId: string | null;
  /** The task's status in the answer, when the answer carried one. */
  taskStatus: string | null;
}

/** Why a delivery went out: the real message, or a probe the emulator sent to see what the receiver does. */
export type DeliveryKind = 'message' | 'duplicate' | 'forged_signature' | 'stale_timestamp';

export interface ReceiverAnswer {
  webhookId: string;
  account: string;
  taskId: string | null;
  kind: DeliveryKind;
  atMs: number;
  /** The receiver's status, or what happened instead. */
  outcome: number | 'timeout' | 'unreachable';
  /** Real milliseconds from sending to the answer. */
  elapsedMs: number;
}

export type CheckStatus = 'pass' | 'fail' | 'not_exercised';

export interface CheckResult {
  id: string;
  status: CheckStatus;
  /** One line: what failed, or what was missing to judge. */
  reason: string | null;
  /** Request ids or webhook-ids that show it. */
  evidence: string[];
}

/** The documented thresholds a verdict judges against (each settable for a run). */
export interface VerdictLimits {
  /** A second identical submit this soon after a failed one is a retry. */
  retryWindowMs: number;
  /** At most this many attempts of one request ... */
  maxAttempts: number;
  /** ... within this window. */
  attemptWindowMs: number;
  /** The shortest wait before retrying a failed request. */
  minRetryWaitMs: number;
  /** The shortest time between two reads of one task. */
  minPollIntervalMs: number;
  /** A receiver answers within this. */
  callbackTimeoutMs: number;
}

export interface Check {
  id: string;
  /** What a resilient client does, and why. */
  holds: string;
  judge(log: ClientLog, limits: VerdictLimits): CheckResult;
}
