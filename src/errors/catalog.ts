/**
 * Every API error code the emulator answers with: HTTP status and default message. Codes marked
 * `emulatorDefined` are not in the reference (it leaves them "not shown"); the README lists them.
 * @see reference "Errors" → "Codes"
 */
export const ERROR_CATALOG = {
  bad_request: { status: 400, message: 'The request body is not a valid JSON object.' },
  invalid_api_key: { status: 401, message: 'Missing or unknown API key.', emulatorDefined: true },
  unauthorized: { status: 401, message: 'Missing or wrong admin token.', emulatorDefined: true },
  signature_required: {
    status: 401,
    message: 'This key signs its requests: send X-Svc-Timestamp, X-Svc-Nonce and X-Svc-Signature.',
    emulatorDefined: true,
  },
  signature_invalid: { status: 401, message: 'The request signature does not match.', emulatorDefined: true },
  signature_expired: {
    status: 401,
    message: 'X-Svc-Timestamp is more than 5 minutes from the current time.',
    emulatorDefined: true,
  },
  nonce_reused: { status: 401, message: 'This X-Svc-Nonce was already used.', emulatorDefined: true },
  insufficient_points: { status: 402, message: 'Not enough points; nothing was frozen.' },
  key_quota_exceeded: { status: 402, message: "The key's quota is used up." },
  permission_denied: { status: 403, message: "The key's callable models exclude this model." },
  model_unavailable: { status: 404, message: 'The model does not exist or is not open to the API.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: {
    status: 405,
    message: 'The path does not take this method; the Allow header lists the ones it takes.',
    emulatorDefined: true,
  },
  request_timeout: {
    status: 408,
    message: 'The request was not sent in time; the connection is closed.',
    emulatorDefined: true,
  },
  idempotency_conflict: {
    status: 409,
    message: 'This Idempotency-Key was used with a different model or parameters.',
  },
  task_not_cancelable: { status: 409, message: 'The task cannot be canceled.' },
  task_finished: {
    status: 409,
    message: 'The task cannot make this transition from its current state.',
    emulatorDefined: true,
  },
  payload_too_large: { status: 413, message: 'The request body is too large.', emulatorDefined: true },
  unsupported_media_type: {
    status: 415,
    message: 'The request body must be application/json.',
    emulatorDefined: true,
  },
  host_not_allowed: {
    status: 421,
    message: 'The request is addressed to a host this emulator does not answer (see --allowed-hosts).',
    emulatorDefined: true,
  },
  invalid_params: { status: 422, message: 'The parameters are invalid.' },
  content_rejected: { status: 422, message: 'The prompt or reference material failed content review.' },
  no_matching_answer: {
    status: 422,
    message: 'No scenario answers this text call, and text answers are strict.',
    emulatorDefined: true,
  },
  request_header_fields_too_large: {
    status: 431,
    message: 'The request line and headers are too large; the connection is closed.',
    emulatorDefined: true,
  },
  rate_limited: { status: 429, message: 'Too many requests per minute for this key.' },
  concurrency_limited: { status: 429, message: 'Too many running tasks and text calls.' },
  internal_error: { status: 500, message: 'The emulator failed unexpectedly.', emulatorDefined: true },
  service_unavailable: { status: 503, message: 'The model is temporarily unavailable.' },
} as const satisfies Record<string, { status: number; message: string; emulatorDefined?: true }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ErrorDetail {
  field: string;
  message: string;
}

/** An API error as data: handlers and domain code throw it, one middleware writes it in the group's shape. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? ERROR_CATALOG[code].message);
    this.status = ERROR_CATALOG[code].status;
  }
}

export const invalidParams = (details: ErrorDetail[]): ApiError =>
  new ApiError(
    'invalid_params',
    details.length === 1 && details[0] ? `${details[0].field} ${details[0].message}` : ERROR_CATALOG.invalid_params.message,
    details,
  );

/** What a text call's fault part-way through generation says, by the code a scenario fails it with. */
export const GENERATION_FAULT_MESSAGES = {
  service_unavailable: 'The model became unavailable during generation; the points were refunded.',
  content_rejected: 'The output failed content review; the points were refunded.',
  invalid_params: 'The parameters were found unacceptable during generation; the points were refunded.',
} as const satisfies Partial<Record<ErrorCode, string>>;

/** A text call's fault part-way through generation, as the error it answers with. */
export const generationFault = (code: keyof typeof GENERATION_FAULT_MESSAGES): ApiError => new ApiError(code, GENERATION_FAULT_MESSAGES[code]);
