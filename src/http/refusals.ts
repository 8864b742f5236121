import type { Response } from 'express';
import { ERROR_CATALOG, endpointGroup, errorBody } from '../errors/index.ts';
import type { ErrorCode } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { ClientRefusal, RefusalAnswer } from '../server/index.ts';
import { recordRefused } from './call-records.ts';
import type { AppDeps } from './context.ts';
import { contextOf } from './request-context.ts';
import { requestIdOf } from './request-id.ts';

/** Each status the HTTP server refuses with, as a catalog code. */
const CODES: Record<ClientRefusal['status'], ErrorCode> = {
  400: 'bad_request',
  408: 'request_timeout',
  413: 'payload_too_large',
  431: 'request_header_fields_too_large',
};

const MESSAGES: Partial<Record<ClientRefusal['status'], string>> = {
  400: 'The request is not valid HTTP/1.1; the connection is closed.',
  413: 'The chunk extensions of the request body are too large; the connection is closed.',
};

const isV1 = (path: string | null): boolean => path === null || path === '/v1' || path.startsWith('/v1/');

/**
 * The answer to a request the HTTP server refused before the app answered it (headers over the size limit,
 * too slow, not HTTP): a request id, the error body of the path's group (the general one when the path was not
 * read), and a call record, as every /v1 answer has. A request whose body was cut is the app's already: its
 * request id, and its record with the final status (written when its answer ends). One whose path is unknown
 * may have been a /v1 request, so it is recorded with an empty method and path.
 * @see reference "Conventions": X-Request-Id on every /v1 response; "What the service does": every /v1 request is recorded
 */
export function refusals(deps: Pick<AppDeps, 'random' | 'clock' | 'db' | 'logger'>): (refusal: ClientRefusal) => RefusalAnswer {
  return (refusal) => {
    const code = CODES[refusal.status];
    const error = { code, message: MESSAGES[refusal.status] ?? ERROR_CATALOG[code].message };
    const path = refusal.response ? (refusal.response as Response).req.originalUrl.split('?')[0] ?? '' : refusal.path;
    const group = endpointGroup(path ?? '');
    if (refusal.response) {
      const res = refusal.response as Response;
      contextOf(res).errorCode = code;
      return { headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(errorBody(group, error, requestIdOf(res))) };
    }
    const requestId = ids.requestId(deps.random);
    const method = refusal.method ?? '';
    if (isV1(path)) {
      recordRefused(deps, { requestId, method, path: path ?? '', status: refusal.status, errorCode: code, latencyMs: refusal.tookMs });
    }
    deps.logger?.info(`${method || '-'} ${path ?? '-'} ${refusal.status}`, {
      request_id: requestId,
      status: refusal.status,
      latency_ms: refusal.tookMs,
      error_code: code,
      reason: refusal.reason,
    });
    return {
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'X-Request-Id': requestId,
        // As the app's answers on this path carry it (request-id.ts).
        ...(group === 'messages' ? { 'request-id': requestId } : {}),
      },
      body: JSON.stringify(errorBody(group, error, requestId)),
    };
  };
}
