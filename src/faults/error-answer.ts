import type { ServerResponse } from 'node:http';
import { ERROR_CATALOG, writeErrorAnswer } from '../errors/index.ts';

/**
 * Codes an `error` fault may answer with: the catalog's, and `capacity_shortage`, which the reference names only
 * as a task's failure reason; as an answer it is a 503 like `service_unavailable` (emulator-defined).
 */
export const FAULT_ERRORS: Readonly<Record<string, { status: number; message: string }>> = {
  ...ERROR_CATALOG,
  capacity_shortage: { status: 503, message: 'Platform compute is temporarily short; try again later.' },
};

/** Codes that carry Retry-After even when the rule sets none: the reference gives it to `rate_limited`. */
const RETRY_AFTER_DEFAULT: Readonly<Record<string, number>> = { rate_limited: 1 };

export const knownFaultCode = (code: string): boolean => Object.hasOwn(FAULT_ERRORS, code);

/**
 * An injected error, written as the service writes its own: the endpoint's body shape, `X-Request-Id` equal to
 * `request_id` (and `request-id` on the Messages endpoint), Retry-After where the code has one or the rule sets it.
 */
export function answerInjectedError(res: ServerResponse, path: string, fault: { code: string; retry_after?: number }, requestId: string): void {
  const known = FAULT_ERRORS[fault.code] ?? { status: 500, message: 'Injected fault.' };
  const retryAfter = fault.retry_after ?? RETRY_AFTER_DEFAULT[fault.code];
  writeErrorAnswer(res, path, known.status, { code: fault.code, message: known.message }, requestId, retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {});
}
