import type { ServerResponse } from 'node:http';
import type { ErrorDetail } from './catalog.ts';

/** What a body is written from: an ApiError, or an error of the proxy's own with a code outside the catalog. */
export interface ShapedError {
  code: string;
  message: string;
  details?: ErrorDetail[] | undefined;
}

/**
 * Each endpoint group answers errors in its own body shape; this is the one place that writes them.
 * @see reference "Errors" → "Body formats"
 */
export type EndpointGroup = 'general' | 'openai' | 'messages';

export function endpointGroup(path: string): EndpointGroup {
  if (path.startsWith('/v1/chat/completions') || path.startsWith('/v1/responses')) return 'openai';
  if (path.startsWith('/v1/messages')) return 'messages';
  return 'general';
}

export function errorBody(group: EndpointGroup, error: ShapedError, requestId: string): Record<string, unknown> {
  switch (group) {
    case 'openai':
      return {
        error: {
          message: error.message,
          type: error.code,
          code: error.code,
          param: error.details?.[0]?.field ?? null,
          request_id: requestId,
          ...(error.details ? { details: error.details } : {}),
        },
      };
    case 'messages':
      return {
        type: 'error',
        error: {
          type: error.code,
          message: error.message,
          code: error.code,
          request_id: requestId,
          ...(error.details ? { details: error.details } : {}),
        },
      };
    case 'general':
      return {
        error: {
          code: error.code,
          message: error.message,
          request_id: requestId,
          ...(error.details ? { details: error.details } : {}),
        },
      };
  }
}

/**
 * An error answer written on a bare response (the proxy's own answers, injected faults): the endpoint group's body
 * shape, `X-Request-Id` equal to `request_id`, and `request-id` too on the Messages endpoints, as the emulator's
 * express routes answer.
 */
export function writeErrorAnswer(res: ServerResponse, path: string, status: number, error: ShapedError, requestId: string, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(errorBody(endpointGroup(path), error, requestId));
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Request-Id': requestId,
    ...(path.startsWith('/v1/messages') ? { 'request-id': requestId } : {}),
    ...headers,
  });
  res.end(text);
}
