import { parseJson } from './json.ts';
import { parseSse } from './sse.ts';
import type { StreamEvent } from './sse.ts';

/** One request and its answer, as a check saw it. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined. */
  json: unknown;
  requestId: string | null;
  /** Server-sent events of a stream, in order. */
  events: StreamEvent[];
  requestHeaders: Record<string, string>;
  requestBody: string | undefined;
}

/** The request side of an exchange, as it was sent. */
export type ExchangeRequest = Pick<Exchange, 'method' | 'path' | 'requestHeaders' | 'requestBody'>;

/** The answer side of an exchange, as it came back, before it is read. */
export type ExchangeAnswer = Pick<Exchange, 'status' | 'headers' | 'text'>;

/**
 * A request and its answer as the checks read them: the body as JSON when the content type says JSON, the events
 * of an event stream, the request id from X-Request-Id. The suite's client, the proxy and parity's replay all
 * build them here.
 */
export function toExchange(request: ExchangeRequest, answer: ExchangeAnswer): Exchange {
  const type = answer.headers.get('content-type') ?? '';
  const json = type.includes('json') ? parseJson(answer.text) : undefined;
  return {
    method: request.method,
    path: request.path,
    status: answer.status,
    headers: answer.headers,
    text: answer.text,
    json,
    requestId: answer.headers.get('x-request-id'),
    events: type.includes('text/event-stream') ? parseSse(answer.text) : [],
    requestHeaders: request.requestHeaders,
    requestBody: request.requestBody,
  };
}
