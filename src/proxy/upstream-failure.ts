import type { ServerResponse } from 'node:http';
import { writeErrorAnswer } from '../errors/index.ts';

/**
 * What the proxy answers itself when the upstream gives no answer: codes of the proxy's own, not of the service's
 * catalog (src/errors), each with its status.
 */
export const UPSTREAM_FAILURES = {
  /** The connection failed: refused, reset, a name that does not resolve, a TLS error. */
  upstream_unreachable: 502,
  /** No status line within the proxy's upstream timeout. */
  upstream_timeout: 504,
} as const;

export type UpstreamFailure = keyof typeof UPSTREAM_FAILURES;

/** The reason the proxy gives up on an upstream request that has not answered in time (it destroys it with this). */
export class UpstreamTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no status line from the upstream within ${timeoutMs} ms`);
  }
}

/**
 * The proxy's answer for a request the upstream did not answer, written like the service's errors so an SDK reads
 * it as one: the endpoint group's body shape (one writer, src/errors/shapes.ts), an `X-Request-Id` of the
 * documented form equal to `error.request_id`, and `request-id` too on the Messages endpoints, as the emulator does.
 * @see reference "Errors" → "Body formats"
 */
export function answerUpstreamFailure(res: ServerResponse, path: string, code: UpstreamFailure, message: string, requestId: string): void {
  // The proxy's codes take the service's shapes without joining its catalog.
  writeErrorAnswer(res, path, UPSTREAM_FAILURES[code], { code, message }, requestId);
}
